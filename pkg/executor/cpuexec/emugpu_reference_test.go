package cpuexec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/cuda"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/cpuexec"
)

// openEmulatedGPU runs the model in-process on the CUDA backend whose
// device is the kernel emulator (pkg/cuda/emu): the backend's uploads,
// plans and launches and the kernels themselves, on the CPU.
func openEmulatedGPU(chunk int) refOpener {
	return func(t *testing.T, path string) (executor.Executor, *routeRecorder) {
		rec := &routeRecorder{}
		ex, err := cpuexec.Load(context.Background(), path, cpuexec.Options{NumCtx: refNumCtx, NumBlocks: refNumBlocks,
			Parallel: 1, ChunkSize: chunk, Routing: rec.hook, Device: cuda.OpenEmulated(1 << 30)})
		if err != nil {
			t.Fatal(err)
		}
		if p := ex.Info().Processor; !strings.HasPrefix(p, "CUDA:") {
			t.Fatalf("processor %q", p)
		}
		return ex, rec
	}
}

// emulatedGPUModels are the fixture models TestReferenceOnEmulatedGPU runs:
// every weight type the GPU keeps (Q8_0, Q4_0, Q4_K + Q6_K, Q5_K, F16,
// F32, exact) or converts to F16 on the host (BF16; Q3_K, Q4_1 and the
// others take the same path), qwen2's biases, and heads narrower than a
// warp (stories260K). The Qwen3, Qwen3-MoE and llama-2-tiny-random
// fixtures pass too but take from half a minute to minutes under
// emulation (large vocabularies): make test-gpu runs them on a real GPU.
var emulatedGPUModels = []string{"llama-q-Q8_0", "llama-q-Q4_0", "llama-q-Q4_K_M", "llama-q-Q5_K_M", "llama-q-F16",
	"llama-q-BF16", "llama-q-F32", "qwen2-tiny-Q8_0", "stories260K"}

// TestReferenceOnEmulatedGPU compares the CUDA backend, run on the kernel
// emulator, with llama.cpp's logits and greedy tokens for fixture models
// of every weight type the GPU keeps natively or converts, within the
// fixtures README's tolerances (what make test-gpu checks on a real GPU).
func TestReferenceOnEmulatedGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("emulates the GPU kernels of whole models")
	}
	for _, name := range emulatedGPUModels {
		t.Run(name, func(t *testing.T) { checkReferenceModel(t, name, referenceModels[name], openEmulatedGPU(0)) })
	}
}
