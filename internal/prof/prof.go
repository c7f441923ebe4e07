// Package prof owns the runners' optional CPU profiles
// (HELEXA_RUNNER_PROFILE): a runner process started by the daemon or by
// helexa bench cannot be given pprof flags, so it profiles itself when the
// variable names a path. Path names any per-process output file the same
// way (HELEXA_CUDA_TIMES too).
package prof

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Start begins a CPU profile written to prefix.PID when prefix is set, and
// returns the function that ends it (a no-op when prefix is empty).
func Start(prefix string) (stop func() error, err error) {
	if prefix == "" {
		return func() error { return nil }, nil
	}
	path := Path(prefix)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("CPU profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// Path is this process's file for a per-process output named by prefix
// (HELEXA_RUNNER_PROFILE, HELEXA_CUDA_TIMES): prefix.PID, so that every
// runner a daemon starts writes its own.
func Path(prefix string) string { return fmt.Sprintf("%s.%d", prefix, os.Getpid()) }
