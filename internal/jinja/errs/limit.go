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

// MaxWidth bounds the width (and precision) of padding operations —
// center, ljust, rjust, zfill, expandtabs, indent, format and %-format
// widths — so one call cannot allocate gigabytes before any budget sees
// the result. Python has no such bound; no chat template comes near it.
const MaxWidth = 1 << 16

// CheckWidth refuses a width above MaxWidth.
func CheckWidth(n int) error {
	if n > MaxWidth {
		return fmt.Errorf("width %d is larger than the %d the engine allows", n, MaxWidth)
	}
	return nil
}
