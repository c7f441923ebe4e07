package local_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
)

// gpuRunner is the helexa-cuda binary the GPU reference tests drive (make
// test-gpu sets HELEXA_CUDA_RUNNER); without one, on a machine without a
// GPU, they skip.
func gpuRunner(t *testing.T) string {
	r := envvars.CUDARunner.Get()
	if r == "" {
		t.Skipf("no GPU runner: set %s to a helexa-cuda binary on a machine with an NVIDIA GPU (make test-gpu)", envvars.CUDARunner.Name)
	}
	return r
}

// openGPU runs the model in a helexa-cuda runner on GPU 0, prefilling at
// most chunk tokens per pass (0: the default).
func openGPU(runner string, chunk int) refOpener {
	return func(t *testing.T, path string) (executor.Executor, *routeRecorder) {
		r, err := rpc.Start(context.Background(), rpc.ProcessOptions{Path: runner, Args: []string{"--device", "0"}},
			rpc.LoadParams{Path: path, LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks, Parallel: 1, ChunkSize: chunk}})
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Info().Processor; !strings.HasPrefix(p, "CUDA:") {
			r.Close()
			t.Fatalf("the model runs on %q, not a GPU", p)
		}
		return r, nil
	}
}

// TestReferenceOnGPU is TestReference and TestFamilyReference with the
// model on a GPU: the same llama.cpp references, the same tolerances.
// Families whose operations the CUDA backend lacks (the recurrent
// qwen35) are refused at load with an error naming the operation, which
// this test checks too.
func TestReferenceOnGPU(t *testing.T) {
	runner := gpuRunner(t)
	names := make([]string, 0, len(referenceModels))
	for n := range referenceModels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			// a GPU machine gets a subset of the fixtures (scripts/gpu-bundle.sh)
			if _, err := os.Stat(filepath.Join(fixtures.Dir(t), "models", name+".gguf")); err != nil {
				t.Skipf("fixture %s is not on this machine", name)
			}
			checkReferenceModel(t, name, referenceModels[name], openGPU(runner, 0))
		})
	}
	for _, fr := range familyReferences {
		name := fr.shape + "-" + fr.quant
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, filepath.Join(familyRefDir, name+".json"))
			path := writeFamilyModel(t, fr.shape, fr.quant, ref)
			checkReference(t, ref, path, fr.tol, openGPU(runner, familyChunk))
		})
	}
}
