package main

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for helexa as a runner process:
// engines built by the tests (serve in-process, bench) start runners with
// os.Executable() — the test binary — and the argument "runner".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "runner" {
		root := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
		root.SetArgs([]string{"runner"})
		os.Exit(exitCode(context.Background(), root.ExecuteContext(context.Background()), os.Stderr))
	}
	os.Exit(m.Run())
}
