// Package prof owns the runners' optional CPU profiles
// (HELEXA_RUNNER_PROFILE): a runner process started by the daemon or by
// helexa bench cannot be given pprof flags, so it profiles itself when the
// variable names a path.
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
	path := fmt.Sprintf("%s.%d", prefix, os.Getpid())
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
