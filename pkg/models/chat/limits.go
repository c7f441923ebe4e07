package chat

import (
	"time"

	"github.com/helexa/helexa/internal/jinja/errs"
	"github.com/helexa/helexa/internal/jinja/exec"
	"github.com/helexa/helexa/internal/jinja/parser"
)

// LimitError says a template went past one of its budgets: Limit names it
// (the Limit* constants) and Value is the bound (nanoseconds for
// LimitRenderTime). Compile and Render return it wrapped with ErrTemplate.
type LimitError = errs.LimitError

// Names of the limits a LimitError reports.
const (
	LimitParseDepth     = errs.LimitParseDepth
	LimitCallDepth      = errs.LimitCallDepth
	LimitLoopIterations = errs.LimitLoopIterations
	LimitOutputBytes    = errs.LimitOutputBytes
	LimitBuiltBytes     = errs.LimitBuiltBytes
	LimitRenderTime     = errs.LimitRenderTime
	LimitSourceBytes    = errs.LimitSourceBytes
)

// MaxSourceBytes bounds the size of a template Compile accepts: forty
// times the largest published chat template, and small enough that
// compiling the worst template of that size stays near 0.1 s and 100 MiB
// (a GGUF's metadata string is bounded only by the file's size).
const MaxSourceBytes = 1 << 20

// MaxParseDepth bounds how deeply a template nests brackets, operator
// chains (a + b + c counts one level per operator) and blocks; Compile
// refuses a deeper template. Python's Jinja2 runs out of recursion well
// before this depth.
const MaxParseDepth = parser.DefaultMaxDepth

// Limits bound one render. A zero field means no bound.
type Limits struct {
	// CallDepth bounds nested macro calls and recursive loop() calls.
	CallDepth int
	// LoopIterations bounds the for-loop iterations of one render (every
	// item a loop looks at, all loops together) and the length of range().
	LoopIterations int
	// OutputBytes bounds the bytes one render writes, counting text that
	// macros and set/filter/call blocks capture each time it is written,
	// and the length of a string built by + or ~.
	OutputBytes int
	// BuiltBytes bounds the strings and lists that filters, operators and
	// methods return over one render (16 bytes a list item): with the
	// engine's 64 MiB bound on any one string, it bounds the memory a
	// render can hold.
	BuiltBytes int
	// RenderTime bounds the wall time of one render.
	RenderTime time.Duration
}

// DefaultLimits are the limits a compiled template starts with: far above
// what any real chat template needs (the whole conformance corpus renders
// within them), low enough that a hostile template fails in well under a
// second or two and a few tens of MiB.
func DefaultLimits() Limits {
	return Limits{
		CallDepth:      500,
		LoopIterations: 1_000_000,
		OutputBytes:    64 << 20,
		BuiltBytes:     256 << 20,
		RenderTime:     10 * time.Second,
	}
}

// WithLimits returns a copy of t that renders within l.
func (t *Template) WithLimits(l Limits) *Template {
	c := *t
	c.limits = l
	return &c
}

// Limits returns the limits t renders within.
func (t *Template) Limits() Limits { return t.limits }

func (l Limits) engine() exec.Limits {
	return exec.Limits{CallDepth: l.CallDepth, LoopIterations: l.LoopIterations, OutputBytes: l.OutputBytes, BuiltBytes: l.BuiltBytes}
}
