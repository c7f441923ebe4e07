package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/helexa/helexa/pkg/engine"
)

// Error codes that are not an engine.Kind.
const (
	codeContextLength = "context_length_exceeded" // OpenAI's code for engine.KindContextLength
	codeBodyTooLarge  = "request_too_large"
	// codeModelNotFound is OpenAI's code for a model that does not exist
	// (engine.KindNotFound: every not-found the engine reports is a model's).
	codeModelNotFound = "model_not_found"
	// codeNoEndpoint is the code of a path no route serves.
	codeNoEndpoint = "not_found"
)

// errorStatus maps an engine error kind to its HTTP status.
func errorStatus(k engine.Kind) int {
	switch k {
	case engine.KindBadRequest, engine.KindContextLength:
		return http.StatusBadRequest
	case engine.KindNotFound:
		return http.StatusNotFound
	case engine.KindUnauthorized:
		return http.StatusUnauthorized
	case engine.KindBusy, engine.KindNoMemory, engine.KindPoisoned:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// errorType is the OpenAI `type` for a kind.
func errorType(k engine.Kind) string {
	switch k {
	case engine.KindBadRequest, engine.KindContextLength:
		return "invalid_request_error"
	case engine.KindNotFound:
		return "not_found_error"
	case engine.KindUnauthorized:
		return "authentication_error"
	default:
		return "server_error"
	}
}

// errorCode is the OpenAI `code` for a kind; it round-trips through kindOf.
func errorCode(k engine.Kind) string {
	switch k {
	case engine.KindContextLength:
		return codeContextLength
	case engine.KindNotFound:
		return codeModelNotFound
	}
	return string(k)
}

// toRunnerError classifies any error as a *engine.Error.
func toRunnerError(err error) *engine.Error {
	var re *engine.Error
	if errors.As(err, &re) {
		return re
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &engine.Error{Kind: engine.KindBadRequest, Msg: "request body too large", Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &engine.Error{Kind: engine.KindInternal, Msg: "request cancelled", Err: err}
	}
	return &engine.Error{Kind: engine.KindInternal, Msg: "internal error", Err: err}
}

// errorResponse renders err as a status and an OpenAI-shaped body.
func errorResponse(err error) (int, ErrorResponse) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, ErrorResponse{Error: ErrorBody{
			Message: err.Error() + "; send a smaller request",
			Type:    "invalid_request_error",
			Code:    codeBodyTooLarge,
		}}
	}
	re := toRunnerError(err)
	return errorStatus(re.Kind), ErrorResponse{Error: ErrorBody{
		Message: re.Error(),
		Type:    errorType(re.Kind),
		Code:    errorCode(re.Kind),
	}}
}

// kindOf recovers the engine error kind from a response's status and code.
func kindOf(status int, code string) engine.Kind {
	switch engine.Kind(code) {
	case engine.KindBadRequest, engine.KindNotFound, engine.KindContextLength, engine.KindBusy,
		engine.KindNoMemory, engine.KindPoisoned, engine.KindUnauthorized, engine.KindInternal:
		return engine.Kind(code)
	}
	switch code {
	case codeContextLength:
		return engine.KindContextLength
	case codeModelNotFound:
		return engine.KindNotFound
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return engine.KindUnauthorized
	case status == http.StatusNotFound:
		return engine.KindNotFound
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
		return engine.KindBusy
	case status >= 400 && status < 500:
		return engine.KindBadRequest
	default:
		return engine.KindInternal
	}
}

// badRequest builds a 400 engine error.
func badRequest(format string, args ...any) *engine.Error {
	return engine.Errorf(engine.KindBadRequest, format, args...)
}
