//go:build unix

package tokenizer

import (
	"syscall"
	"testing"
	"time"
)

// cpuTimer measures the process's user+system CPU time over a benchmark.
type cpuTimer struct{ start time.Duration }

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPUTimer(b *testing.B) cpuTimer { return cpuTimer{start: processCPU(b)} }

// report adds cpu-ms/op to the benchmark's results.
func (c cpuTimer) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU(b)-c.start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
