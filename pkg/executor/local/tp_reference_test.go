package local_test

import (
	"context"
	"flag"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/executor/tp"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/sampling"
)

// serveWorker makes the test binary a worker rank, as `helexa worker` does.
func serveWorker(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	rank := fs.Int("rank", 0, "")
	size := fs.Int("size", 0, "")
	dir := fs.String("rendezvous", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := rpc.Serve(context.Background(), os.Stdin, os.Stdout, tp.WorkerOpener(local.Shards{}, *rank, *size, *dir, time.Minute), nil); err != nil {
		return 2
	}
	return 0
}

// openTP runs the model over two ranks: rank 0 here, rank 1 in a worker
// process. Rank 0 records the MoE routing (every rank routes alike).
func openTP(t *testing.T, path string) (executor.Executor, *routeRecorder) {
	return openTPChunked(0)(t, path)
}

// openTPChunked is openTP prefilling at most chunk tokens per pass (0: the
// default).
func openTPChunked(chunk int) refOpener {
	return func(t *testing.T, path string) (executor.Executor, *routeRecorder) { return openTPWith(t, path, chunk) }
}

func openTPWith(t *testing.T, path string, chunk int) (executor.Executor, *routeRecorder) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := &routeRecorder{}
	ex, err := tp.Load(context.Background(), path, tp.Options{
		Load:   executor.LoadOptions{TP: 2, NumCtx: refNumCtx, NumBlocks: refNumBlocks, Parallel: 1, ChunkSize: chunk, Threads: 2},
		Device: local.Shards{Routing: rec.hook},
		Start:  tp.ProcessStarter(rpc.ProcessOptions{Path: exe, Env: append(os.Environ(), runnerEnv+"=worker")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := ex.Info().Ranks; len(r) != 2 || r[1].PID == 0 || r[1].PID == os.Getpid() {
		t.Fatalf("ranks %+v: rank 1 must be another process", r)
	}
	return ex, rec
}

// tpSplittable reports whether a fixture model splits over two ranks.
func tpSplittable(t *testing.T, name string) bool {
	m, err := modelfile.Open(fixtures.Path(t, "models", name+".gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return m.Arch.CheckTP(2) == nil
}

// TestReferenceTensorParallel runs the llama.cpp reference comparison of
// every fixture model that splits over two ranks, with the model split
// over two rank processes: same tolerances, same greedy tokens.
func TestReferenceTensorParallel(t *testing.T) {
	names := make([]string, 0, len(referenceModels))
	for n := range referenceModels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !tpSplittable(t, name) {
			t.Logf("%s does not split over 2 ranks", name)
			continue
		}
		t.Run(name, func(t *testing.T) { checkReferenceModel(t, name, referenceModels[name], openTP) })
	}
}

// TestTensorParallelMatchesOneRank compares the logits of every position
// of a prompt longer than a prefill chunk, and 24 greedy steps, between one
// rank and two, for the F32 models: within 1e-4.
func TestTensorParallelMatchesOneRank(t *testing.T) {
	for _, name := range []string{"stories260K", "llama-q-F32", "qwen2-tiny-F32"} {
		t.Run(name, func(t *testing.T) {
			path := fixtures.Path(t, "models", name+".gguf")
			one, _ := openLocal(t, path)
			defer one.Close()
			two, _ := openTP(t, path)
			defer two.Close()
			prompt := make([]int32, 40)
			for i := range prompt {
				prompt[i] = int32(1 + (i*37)%300)
			}
			a, b := generate(t, one, prompt, 24), generate(t, two, prompt, 24)
			worst := 0.0
			for i := range a.logits {
				for j := range a.logits[i] {
					worst = math.Max(worst, math.Abs(float64(a.logits[i][j]-b.logits[i][j])))
				}
			}
			if worst > 1e-4 {
				t.Errorf("max |Δlogit| one rank vs two = %.3g, want ≤ 1e-4", worst)
			}
			for i := range a.tokens {
				if a.tokens[i] != b.tokens[i] {
					t.Fatalf("greedy token %d: one rank %d, two ranks %d", i, a.tokens[i], b.tokens[i])
				}
			}
			t.Logf("max |Δlogit| %.3g over %d positions; %d greedy tokens identical", worst, len(a.logits), len(a.tokens))
		})
	}
}

type genOut struct {
	logits [][]float32
	tokens []int32
}

// generate prefills prompt in chunks of 16 (logits of every position),
// then decodes n greedy tokens, keeping each step's logits.
func generate(t *testing.T, ex executor.Executor, prompt []int32, n int) genOut {
	t.Helper()
	ctx := context.Background()
	s, err := executor.NewSession(ex, sampling.Params{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out genOut
	var res executor.Result
	for i := 0; i < len(prompt); i += 16 {
		res, err = s.Prefill(ctx, prompt[i:min(i+16, len(prompt))], executor.LogitsAll)
		if err != nil {
			t.Fatal(err)
		}
		out.logits = append(out.logits, res.Logits...)
	}
	for range n {
		out.tokens = append(out.tokens, res.Token)
		if res, err = s.Decode(ctx, res.Token); err != nil {
			t.Fatal(err)
		}
		out.logits = append(out.logits, res.Logits...)
	}
	return out
}
