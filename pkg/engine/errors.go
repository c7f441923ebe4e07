package engine

import "fmt"

// Kind classifies an engine error so front ends can map it to a status code.
type Kind string

// Error kinds.
const (
	KindBadRequest    Kind = "bad_request"         // 400
	KindNotFound      Kind = "not_found"           // 404
	KindContextLength Kind = "context_length"      // 400: prompt longer than the context
	KindBusy          Kind = "busy"                // 503: queue full
	KindNoMemory      Kind = "insufficient_memory" // 503: KV cannot fit
	KindPoisoned      Kind = "poisoned"            // 503: model failed; unload and load again
	KindUnauthorized  Kind = "unauthorized"        // 401
	KindInternal      Kind = "internal"            // 500
)

// Error is an engine error with a kind.
type Error struct {
	Kind Kind
	Msg  string // what failed; empty when the cause's own message says it all
	Err  error  // optional cause
}

func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error() // the cause says it all
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Msg, e.Err)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
