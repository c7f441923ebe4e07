package local_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/compute/cuda"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/sampling"
)

// openEmulatedGPU runs the model in-process on the CUDA backend whose
// device is the kernel emulator (pkg/compute/cuda/emu): the backend's uploads,
// plans and launches and the kernels themselves, on the CPU.
func openEmulatedGPU(chunk int) refOpener {
	return func(t *testing.T, path string) (executor.Executor, *routeRecorder) {
		rec := &routeRecorder{}
		ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks, Parallel: 1, ChunkSize: chunk}, Routing: rec.hook, Device: cuda.OpenEmulated(4 << 30)})
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
// warp (stories260K); then the F32 tiny family models of gemma3 (sliding
// windows, GeGLU, softcap) and qwen35moe (the recurrent layers, snapshots
// of their state, MoE). The Qwen3, Qwen3-MoE and llama-2-tiny-random
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
		t.Run(name, func(t *testing.T) {
			quickEmulatedGPU(t, name)
			checkReferenceModel(t, name, referenceModels[name], openEmulatedGPU(0))
		})
	}
	for _, fr := range familyReferences {
		name := fr.shape + "-" + fr.quant
		if !emulatedGPUFamilies[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			quickEmulatedGPU(t, name)
			ref := readReference(t, filepath.Join(familyRefDir, name+".json"))
			checkReference(t, ref, writeFamilyModel(t, fr.shape, fr.quant, ref), fr.tol, openEmulatedGPU(familyChunk))
		})
	}
}

// emulatedGPUQuick are the models make test runs on the emulated GPU (a
// minute in all): a plain block type, a K-quant mix, and the quantized
// recurrent MoE model on a near tie. make test-all runs every model above.
var emulatedGPUQuick = map[string]bool{"llama-q-Q8_0": true, "llama-q-Q4_K_M": true, "qwen35moe-tiny-q8_0": true}

// quickEmulatedGPU skips a model outside emulatedGPUQuick unless the
// exhaustive matrices run.
func quickEmulatedGPU(t *testing.T, name string) {
	t.Helper()
	if !emulatedGPUQuick[name] {
		fixtures.Exhaustive(t, "the emulated GPU on "+name)
	}
}

// emulatedGPUFamilies are the family models TestReferenceOnEmulatedGPU
// runs: two F32 ones, and the quantized recurrent and MoE models that sit
// on near ties, which pass only when the GPU rounds activations exactly as
// the CPU quantizes them (they failed on an H200 before it did).
var emulatedGPUFamilies = map[string]bool{
	"gemma3-tiny-f32": true, "qwen35moe-tiny-f32": true,
	"qwen35-tiny-q4_k_m": true, "qwen35moe-tiny-q8_0": true, "qwen35moe-tiny-q4_k_m": true,
}

// TestEmulatedGPUEveryArch runs a tiny random F32 model of every supported
// architecture on the emulated GPU and on the CPU: a 29-token prefill (the
// GEMM path) then 6 decode steps (the matvec path) must give the same
// logits up to rounding: every operation of every family (q/k norms,
// biases, MoE routing and expert sums, sliding windows, GeGLU, softcap,
// the recurrent layers' convolution and delta rule) against the CPU's.
// (Quantized kernels are checked against llama.cpp's references above.)
func TestEmulatedGPUEveryArch(t *testing.T) {
	prompt := make([]int32, 29)
	for i := range prompt {
		prompt[i] = int32((i*13 + 5) % 64)
	}
	for _, a := range arch.Supported() {
		tol := 1e-4
		if a == "gemma3" {
			tol = 1e-3 // GELU rounds its input to F16 (as ggml-cpu): an ulp upstream can move it a whole F16 step
		}
		t.Run(a, func(t *testing.T) { compareEmulatedGPU(t, a, prompt, tol) })
	}
}

// compareEmulatedGPU is one architecture of TestEmulatedGPUEveryArch.
func compareEmulatedGPU(t *testing.T, a string, prompt []int32, tol float64) {
	path, err := archtest.Write(t.TempDir(), archtest.Config{Arch: a, Type: dtype.F32})
	if err != nil {
		t.Fatal(err)
	}
	opts := local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8, Threads: 1}}
	cpu, err := local.Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	opts.Device = cuda.OpenEmulated(4 << 30)
	gpu, err := local.Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	want, script := scriptLogits(t, cpu, prompt, nil, 6)
	got, _ := scriptLogits(t, gpu, prompt, script, 0)
	if len(got) != len(want) {
		t.Fatalf("%d logit rows on the GPU, %d on the CPU", len(got), len(want))
	}
	for p := range want {
		if d := maxAbsDiff(want[p], got[p]); d > tol*(1+maxAbs(want[p])) {
			t.Errorf("position %d: GPU logits differ from the CPU's by %g", p, d)
		}
	}
	// greedy generation takes the device's argmax (no logits read back)
	s, err := executor.NewSessionAt(gpu, sampling.Params{}, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	toks, err := s.Generate(context.Background(), prompt, len(script))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(toks, script) {
		t.Errorf("greedy tokens on the GPU %v, the CPU's argmax %v", toks, script)
	}
}

// scriptLogits prefills prompt (logits of every position) and then
// decodes the tokens of script one by one (the last position's logits of
// each); with a nil script it decodes steps tokens, each the argmax of the
// logits before it, and returns the script it followed.
func scriptLogits(t *testing.T, ex executor.Executor, prompt, script []int32, steps int) ([][]float32, []int32) {
	t.Helper()
	s, err := executor.NewSessionAt(ex, sampling.Params{}, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Prefill(context.Background(), prompt, executor.LogitsAll)
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Logits
	if script == nil {
		for range steps {
			script = append(script, argmax(rows[len(rows)-1]))
			res, err := s.Decode(context.Background(), script[len(script)-1])
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, res.Logits...)
		}
		return rows, script
	}
	for _, tok := range script {
		res, err := s.Decode(context.Background(), tok)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, res.Logits...)
	}
	return rows, script
}

// maxAbs is the largest magnitude in v.
func maxAbs(v []float32) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, float64(max(x, -x)))
	}
	return m
}

// TestEmulatedGPULoadTooBig: a model whose weights do not fit the device's
// free memory (with the reserve) is refused before any upload, with
// cuda.ErrNoRoom and a way out in the message.
func TestEmulatedGPULoadTooBig(t *testing.T) {
	path := fixtures.Path(t, "models", "llama-q-Q8_0.gguf") // ≈ 1.9 MiB of weights
	_, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8}, Device: cuda.OpenEmulated(512<<20 + 1<<20)})
	if !errors.Is(err, cuda.ErrNoRoom) || !strings.Contains(err.Error(), "--device cpu") {
		t.Fatalf("loading 1.9 MiB of weights into 1 MiB past the reserve: %v", err)
	}
	ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8}, Device: cuda.OpenEmulated(512<<20 + 4<<20)})
	if err != nil {
		t.Fatalf("with 4 MiB past the reserve: %v", err)
	}
	ex.Close()
}
