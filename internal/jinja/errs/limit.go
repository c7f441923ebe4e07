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
	LimitBuiltBytes     = "built bytes"
	LimitRenderTime     = "render time"
	LimitSourceBytes    = "source bytes"
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

// MaxStringBytes bounds the strings that str methods (which run outside
// any one render's budget) may build: replace, join, format, expandtabs.
const MaxStringBytes = 64 << 20

// MaxItems bounds the lists that split and the list-building filters
// (batch, slice, list of a string) may build.
const MaxItems = 1 << 20

// CheckStringSize refuses to build a string of n bytes (n < 0: overflowed).
func CheckStringSize(n int) error {
	if n < 0 || n > MaxStringBytes {
		return fmt.Errorf("result would be larger than the %d bytes the engine allows", MaxStringBytes)
	}
	return nil
}

// CheckItems refuses to build a list of n items.
func CheckItems(n int) error {
	if n < 0 || n > MaxItems {
		return fmt.Errorf("result would have more than the %d items the engine allows", MaxItems)
	}
	return nil
}
