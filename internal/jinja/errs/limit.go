package errs

import (
	"fmt"
	"time"
)

// Names of the limits a LimitError reports.
const (
	LimitParseDepth     = "parse depth"
	LimitCallDepth      = "call depth"
	LimitLoopIterations = "loop iterations"
	LimitOutputBytes    = "output bytes"
	LimitRenderTime     = "render time"
)

// LimitError says a template went past one of the engine's budgets:
// Limit names it (one of the Limit* constants) and Value is the bound
// (nanoseconds for LimitRenderTime).
type LimitError struct {
	Limit string
	Value int64
}

func (e *LimitError) Error() string {
	if e.Limit == LimitRenderTime {
		return fmt.Sprintf("template limit exceeded: %s %s", e.Limit, time.Duration(e.Value))
	}
	return fmt.Sprintf("template limit exceeded: %s %d", e.Limit, e.Value)
}
