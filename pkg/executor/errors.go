package executor

import (
	"context"
	"errors"
	"fmt"
)

// ErrorKind classifies an executor error in a form that crosses a process
// boundary (the runner RPC sends it as a string).
type ErrorKind string

// Error kinds.
const (
	// KindBadRequest: the request's own fault (bad tokens, bad sampling
	// settings, a panic in one sequence's sampler). Never poisons a model.
	KindBadRequest ErrorKind = "bad_request"
	// KindDevice: the executor failed (device error, a dead runner or
	// rank, a panic in the forward pass). The model is poisoned.
	KindDevice ErrorKind = "device"
	// KindCancelled: the caller's context ended before the work ran.
	KindCancelled ErrorKind = "cancelled"
	// KindClosed: the executor was closed.
	KindClosed ErrorKind = "closed"
	// KindUnsupported: the executor does not implement what was asked
	// (an unknown RPC op, a logits mode a remote executor refuses).
	KindUnsupported ErrorKind = "unsupported"
	// KindNoMemory: the model or the request does not fit the device's
	// free memory (a load refused by the GPU runner's pre-flight).
	KindNoMemory ErrorKind = "no_memory"
	// KindInternal: anything else.
	KindInternal ErrorKind = "internal"
)

// Error is an executor error as a machine-readable kind and a message, so
// that it survives the runner RPC unchanged.
type Error struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Is lets errors.Is match an *Error against the kind sentinels ErrDevice,
// ErrBadRequest, ErrClosed and the context errors.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrDevice:
		return e.Kind == KindDevice
	case ErrBadRequest:
		return e.Kind == KindBadRequest
	case ErrClosed:
		return e.Kind == KindClosed
	case ErrNoMemory:
		return e.Kind == KindNoMemory
	case context.Canceled:
		return e.Kind == KindCancelled
	}
	return false
}

// Errorf builds an *Error of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// ErrDevice marks an executor failure that poisons the model; executors
// wrap their device errors with it so callers can test errors.Is.
var ErrDevice = errors.New("executor device failure")

// ErrBadRequest marks an error that is the request's own fault.
var ErrBadRequest = errors.New("bad request")

// ErrNoMemory marks a load or request that does not fit the device's
// memory: not a failure of the model, and not the request's own fault.
var ErrNoMemory = errors.New("not enough device memory")

// ErrClosed is returned by an executor that was closed.
var ErrClosed = errors.New("executor is closed")

// AsError converts any error into an *Error, classifying it by the
// sentinels it wraps; nil stays nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Message == err.Error() {
		return e
	}
	return &Error{Kind: KindOf(err), Message: err.Error()}
}

// KindOf classifies an error by the sentinels it wraps.
func KindOf(err error) ErrorKind {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, ErrBadRequest):
		return KindBadRequest
	case errors.Is(err, ErrDevice):
		return KindDevice
	case errors.Is(err, ErrClosed):
		return KindClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCancelled
	}
	return KindInternal
}
