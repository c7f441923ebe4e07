package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/helexa/helexa/pkg/runner"
)

// Error codes that are not a runner.Kind.
const (
	codeContextLength = "context_length_exceeded" // OpenAI's code for runner.KindContextLength
	codeBodyTooLarge  = "request_too_large"
)

// errorStatus maps an engine error kind to its HTTP status.
func errorStatus(k runner.Kind) int {
	switch k {
	case runner.KindBadRequest, runner.KindContextLength:
		return http.StatusBadRequest
	case runner.KindNotFound:
		return http.StatusNotFound
	case runner.KindUnauthorized:
		return http.StatusUnauthorized
	case runner.KindBusy, runner.KindNoMemory, runner.KindPoisoned:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// errorType is the OpenAI `type` for a kind.
func errorType(k runner.Kind) string {
	switch k {
	case runner.KindBadRequest, runner.KindContextLength:
		return "invalid_request_error"
	case runner.KindNotFound:
		return "not_found_error"
	case runner.KindUnauthorized:
		return "authentication_error"
	default:
		return "server_error"
	}
}

// errorCode is the OpenAI `code` for a kind; it round-trips through kindOf.
func errorCode(k runner.Kind) string {
	if k == runner.KindContextLength {
		return codeContextLength
	}
	return string(k)
}

// toRunnerError classifies any error as a *runner.Error.
func toRunnerError(err error) *runner.Error {
	var re *runner.Error
	if errors.As(err, &re) {
		return re
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &runner.Error{Kind: runner.KindBadRequest, Msg: "request body too large", Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &runner.Error{Kind: runner.KindInternal, Msg: "request cancelled", Err: err}
	}
	return &runner.Error{Kind: runner.KindInternal, Msg: "internal error", Err: err}
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
func kindOf(status int, code string) runner.Kind {
	switch runner.Kind(code) {
	case runner.KindBadRequest, runner.KindNotFound, runner.KindContextLength, runner.KindBusy,
		runner.KindNoMemory, runner.KindPoisoned, runner.KindUnauthorized, runner.KindInternal:
		return runner.Kind(code)
	}
	if code == codeContextLength {
		return runner.KindContextLength
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return runner.KindUnauthorized
	case status == http.StatusNotFound:
		return runner.KindNotFound
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
		return runner.KindBusy
	case status >= 400 && status < 500:
		return runner.KindBadRequest
	default:
		return runner.KindInternal
	}
}

// badRequest builds a 400 engine error.
func badRequest(format string, args ...any) *runner.Error {
	return runner.Errorf(runner.KindBadRequest, format, args...)
}
