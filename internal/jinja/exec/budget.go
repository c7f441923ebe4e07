package exec

import (
	"context"
	"reflect"

	"github.com/helexa/helexa/internal/jinja/errs"
)

// Limits bound one render. A zero field means no bound.
type Limits struct {
	// CallDepth bounds nested macro and recursive-loop calls.
	CallDepth int
	// LoopIterations bounds the for-loop iterations of the whole render,
	// counting every item a loop looks at, and the length of range().
	LoopIterations int
	// OutputBytes bounds the bytes written by the whole render, counting
	// text captured by macros and call, filter and set blocks each time it
	// is written, and the length of strings built by the operators that
	// can grow them (* + ~ join).
	OutputBytes int
	// BuiltBytes bounds the strings and lists that filters and methods
	// return over the whole render (a list counts 16 bytes an item),
	// which bounds the memory a render can hold.
	BuiltBytes int
}

// Budget is the running account of one render against its Limits and its
// context. It is shared by all renderers and evaluators of that render
// (which is single-threaded). A nil *Budget bounds nothing.
type Budget struct {
	ctx        context.Context
	limits     Limits
	depth      int
	iterations int
	output     int
	built      int
	err        error
}

// NewBudget starts the account of one render; ctx cancels it (its cause,
// context.Cause, is the error the render returns).
func NewBudget(ctx context.Context, limits Limits) *Budget {
	return &Budget{ctx: ctx, limits: limits}
}

// Err returns the first limit or cancellation the render ran into, which
// stays the render's error however the template's own error handling
// wrapped it.
func (b *Budget) Err() error {
	if b == nil {
		return nil
	}
	return b.err
}

func (b *Budget) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// Check returns the context's cause once it is done.
func (b *Budget) Check() error {
	if b == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	if b.ctx != nil && b.ctx.Err() != nil {
		return b.fail(context.Cause(b.ctx))
	}
	return nil
}

// Enter accounts for one more nested call; Leave ends it.
func (b *Budget) Enter() error {
	if b == nil {
		return nil
	}
	if err := b.Check(); err != nil {
		return err
	}
	if b.limits.CallDepth > 0 && b.depth >= b.limits.CallDepth {
		return b.fail(&errs.LimitError{Limit: errs.LimitCallDepth, Value: int64(b.limits.CallDepth)})
	}
	b.depth++
	return nil
}

// Leave ends a call begun with Enter.
func (b *Budget) Leave() {
	if b != nil && b.depth > 0 {
		b.depth--
	}
}

// Iterate accounts for one loop iteration.
func (b *Budget) Iterate() error {
	if b == nil {
		return nil
	}
	if err := b.Check(); err != nil {
		return err
	}
	b.iterations++
	if b.limits.LoopIterations > 0 && b.iterations > b.limits.LoopIterations {
		return b.fail(b.loopLimit())
	}
	return nil
}

func (b *Budget) loopLimit() error {
	return &errs.LimitError{Limit: errs.LimitLoopIterations, Value: int64(b.limits.LoopIterations)}
}

// CheckLength refuses a sequence of n items (range) longer than the loop
// budget could ever iterate.
func (b *Budget) CheckLength(n int) error {
	if b == nil || b.limits.LoopIterations <= 0 || n <= b.limits.LoopIterations {
		return nil
	}
	return b.fail(b.loopLimit())
}

// Write accounts for n bytes of output.
func (b *Budget) Write(n int) error {
	if b == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	b.output += n
	if b.limits.OutputBytes > 0 && b.output > b.limits.OutputBytes {
		return b.fail(b.outputLimit())
	}
	return nil
}

// CheckSize refuses to build a string of n bytes larger than the output
// budget.
func (b *Budget) CheckSize(n int) error {
	if b == nil || b.limits.OutputBytes <= 0 || n <= b.limits.OutputBytes {
		return nil
	}
	return b.fail(b.outputLimit())
}

func (b *Budget) outputLimit() error {
	return &errs.LimitError{Limit: errs.LimitOutputBytes, Value: int64(b.limits.OutputBytes)}
}

// Built accounts for a value a filter or method returned.
func (b *Budget) Built(v *Value) error {
	if b == nil || b.limits.BuiltBytes <= 0 || v == nil {
		return nil
	}
	if b.err != nil {
		return b.err
	}
	switch v.getResolvedValue().Kind() {
	case reflect.String:
		b.built += v.getResolvedValue().Len()
	case reflect.Slice, reflect.Array:
		b.built += 16 * v.getResolvedValue().Len()
	default:
		return nil
	}
	if b.built > b.limits.BuiltBytes {
		return b.fail(&errs.LimitError{Limit: errs.LimitBuiltBytes, Value: int64(b.limits.BuiltBytes)})
	}
	return nil
}
