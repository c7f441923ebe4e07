package local_test

import (
	"context"
	"os"
	"sort"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
)

// runnerEnv makes the test binary serve the CPU executor as a runner
// process, as `helexa runner` does.
var runnerEnv = envvars.TestRunner.Name

func TestMain(m *testing.M) {
	if envvars.TestRunner.Get() == "worker" {
		os.Exit(serveWorker(os.Args[1:]))
	}
	if envvars.TestRunner.Get() == "1" {
		open := func(ctx context.Context, p rpc.LoadParams) (executor.Executor, error) {
			return local.Load(ctx, p.Path, local.Options{LoadOptions: p.LoadOptions})
		}
		if err := rpc.Serve(context.Background(), os.Stdin, os.Stdout, open, nil); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// openRunner runs the model in a runner process (MoE routing cannot be
// observed there; the logits and tokens are compared all the same).
func openRunner(t *testing.T, path string) (executor.Executor, *routeRecorder) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := rpc.Start(context.Background(), rpc.ProcessOptions{Path: exe, Env: append(os.Environ(), runnerEnv+"=1")},
		rpc.LoadParams{Path: path, LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks}})
	if err != nil {
		t.Fatal(err)
	}
	if r.PID() == 0 || r.PID() == os.Getpid() {
		t.Fatalf("runner pid %d: the model must run in another process", r.PID())
	}
	return r, nil
}

// TestReferenceThroughRunner runs every fixture reference comparison with
// the model in a runner process, driven over the RPC: same tolerances,
// same greedy tokens as in-process.
func TestReferenceThroughRunner(t *testing.T) {
	names := make([]string, 0, len(referenceModels))
	for n := range referenceModels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { checkReferenceModel(t, name, referenceModels[name], openRunner) })
	}
}
