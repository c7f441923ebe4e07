package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// request is one generation handed from a caller's goroutine to a model's
// scheduler.
type request struct {
	id     string
	ctx    context.Context // cancelled when the caller gives up
	prompt []int32
	opts   Options
	gen    *generation
	out    *outbox
	queued time.Time
	// embed makes the request an embedding: its prompt is prefilled
	// (never from the prefix cache), nothing is sampled, and the pooled
	// hidden state ends it.
	embed     executor.EmbedMode
	embedding []float32
	// generated are the ids sampled after the prompt that stand for the
	// output (not an end-of-generation token, nor the tokens of text a stop
	// string cut off), set by relay from the final event.
	generated []int32
}

// event is what the scheduler sends back: a delta, or the end.
type event struct {
	delta *Delta
	done  bool
	res   Result
	err   error
	// generated ends a chat: request.generated.
	generated []int32
}

// outbox is an unbounded queue of events from the scheduler to the caller,
// so a slow client never blocks the batch. It is bounded in practice by the
// request's token budget.
type outbox struct {
	mu     sync.Mutex
	events []event
	closed bool
	notify chan struct{}
}

func newOutbox() *outbox { return &outbox{notify: make(chan struct{}, 1)} }

func (o *outbox) send(ev event) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.events = append(o.events, ev)
	if ev.done {
		o.closed = true
	}
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

func (o *outbox) take() []event {
	o.mu.Lock()
	defer o.mu.Unlock()
	evs := o.events
	o.events = nil
	return evs
}

// requestIDKey carries a caller-chosen request id in a context.
type requestIDKey struct{}

// WithRequestID returns a context whose requests log under id (front ends
// use it so their logs and the engine's agree).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the id WithRequestID put in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID returns the context's request id or a fresh short one.
func requestID(ctx context.Context) string {
	if id := RequestIDFrom(ctx); id != "" {
		return id
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
