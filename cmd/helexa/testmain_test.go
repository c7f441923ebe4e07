package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
)

// TestMain lets the test binary stand in for helexa as a runner process:
// engines built by the tests (serve in-process, bench) start runners with
// os.Executable() — the test binary — and the argument "runner".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "runner" || os.Args[1] == "worker") {
		root := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
		root.SetArgs(os.Args[1:])
		os.Exit(exitCode(context.Background(), root.ExecuteContext(context.Background()), os.Stderr))
	}
	isolateEnv()
	os.Exit(m.Run())
}

// isolateEnv clears the caller's helexa and Hugging Face settings
// (HELEXA_NUM_CTX, HELEXA_HOST, HF_HUB_OFFLINE, …) so that the tests, and
// the binaries and daemons they start, see only what each test sets; the
// fixtures location is kept.
func isolateEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == envvars.Fixtures.Name {
			continue
		}
		if strings.HasPrefix(name, "HELEXA_") || strings.HasPrefix(name, "HF_") || name == "XDG_CACHE_HOME" {
			os.Unsetenv(name)
		}
	}
}
