//go:build !unix

package tokenizer

import "testing"

// cpuTimer is a no-op where getrusage is unavailable.
type cpuTimer struct{}

func startCPUTimer(*testing.B) cpuTimer { return cpuTimer{} }

func (cpuTimer) report(*testing.B) {}
