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
	testGPURunner = envvars.CUDARunner.Get()
	testAll = envvars.TestAll.Get() == "1"
	isolateEnv()
	os.Exit(m.Run())
}

// testGPURunner is the helexa-cuda binary HELEXA_CUDA_RUNNER named when the
// tests started (make test-gpu sets it), read before isolateEnv clears it:
// only the GPU tests pass it on to the daemons they start.
var testGPURunner string

// testAll records HELEXA_TEST_ALL=1 (make test-all), read before
// isolateEnv clears it: tests that skip when an optional dependency is
// missing fail instead.
var testAll bool

// isolateEnv clears the caller's helexa and Hugging Face settings
// (HELEXA_NUM_CTX, HELEXA_HOST, HF_HUB_OFFLINE, …) so that the tests, and
// the binaries and daemons they start, see only what each test sets; the
// fixtures location and the helexa binary to test (HELEXA_TEST_BIN) are
// kept.
func isolateEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == envvars.Fixtures.Name || name == envvars.TestBin.Name {
			continue
		}
		if strings.HasPrefix(name, "HELEXA_") || strings.HasPrefix(name, "HF_") || name == "XDG_CACHE_HOME" {
			os.Unsetenv(name)
		}
	}
}
