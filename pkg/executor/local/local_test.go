package local_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/compute/cpu"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/sampling"
)

// paragraph is a 40-token prompt (ids valid in every 512-token vocab).
var paragraph = func() []int32 {
	out := []int32{1}
	for i := 0; i < 39; i++ {
		out = append(out, int32((i*37+11)%500+3))
	}
	return out
}()

func loadFixture(t testing.TB, name string, opts local.Options) *local.Executor {
	t.Helper()
	ex, err := local.Load(context.Background(), fixtures.Path(t, "models", name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

func prefillAll(t *testing.T, ex executor.Executor, first int, tokens []int32) [][]float32 {
	t.Helper()
	s, err := executor.NewSessionAt(ex, sampling.Params{}, first, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Prefill(context.Background(), tokens, executor.LogitsAll)
	if err != nil {
		t.Fatal(err)
	}
	return res.Logits
}

// TestChunkedPrefill: a prompt longer than the chunk size gives the same
// logits chunked as in one pass.
func TestChunkedPrefill(t *testing.T) {
	for _, model := range []string{"llama-q-Q4_K_M.gguf", "qwen2-tiny-F32.gguf"} {
		t.Run(model, func(t *testing.T) {
			one := prefillAll(t, loadFixture(t, model, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 128, NumBlocks: 8}}), 0, paragraph)
			chunked := prefillAll(t, loadFixture(t, model, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 128, NumBlocks: 8, ChunkSize: 7}}), 0, paragraph)
			if len(one) != len(paragraph) || len(chunked) != len(paragraph) {
				t.Fatalf("got %d and %d logit rows for %d tokens", len(one), len(chunked), len(paragraph))
			}
			for p := range one {
				if d := maxAbsDiff(one[p], chunked[p]); d > 1e-5 {
					t.Errorf("position %d: chunked logits differ by %g", p, d)
				}
			}
		})
	}
}

// TestChunkedPrefillEveryArch: the same check on a tiny model of every
// supported architecture (the MoE FFN and q/k norms included), with chunk
// sizes that split the prompt unevenly; chunking must not change a bit
// where the kernels are bit-exact (quant.BitExact). The AVX-512 kernels
// multiply a prefill of 16 rows and more (32 for the K-quants) through
// another layout than a shorter one (row-interleaved, float sums in
// another order); the last-bit difference can move an activation across a
// rounding step of its 8-bit quantization in a later layer, which moves
// these random models' logits by up to about 0.04. There chunking may
// change logits by 0.1 at most, far below what a chunking mistake does.
func TestChunkedPrefillEveryArch(t *testing.T) {
	prompt := make([]int32, 29)
	for i := range prompt {
		prompt[i] = int32((i*13 + 5) % 64)
	}
	tol := 0.0
	if !quant.BitExact(dtype.Q8_0) {
		tol = 0.1
	}
	for _, a := range arch.Supported() {
		path, err := archtest.Write(t.TempDir(), archtest.Config{Arch: a, Type: dtype.Q8_0})
		if err != nil {
			t.Fatal(err)
		}
		load := func(chunk int) *local.Executor {
			ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8, ChunkSize: chunk, Threads: 2}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ex.Close() })
			return ex
		}
		one := prefillAll(t, load(0), 0, prompt)
		for _, chunk := range []int{1, 4, 28} {
			t.Run(fmt.Sprintf("%s/chunk%d", a, chunk), func(t *testing.T) {
				chunked := prefillAll(t, load(chunk), 0, prompt)
				if len(chunked) != len(prompt) {
					t.Fatalf("%d logit rows for %d tokens", len(chunked), len(prompt))
				}
				for p := range one {
					if d := maxAbsDiff(one[p], chunked[p]); d > tol {
						t.Errorf("position %d: chunked logits differ by %g", p, d)
					}
				}
			})
		}
	}
}

// TestBatchedStep: two different sequences in one step (one prefilling, one
// decoding) give the same logits as each alone.
func TestBatchedStep(t *testing.T) {
	ctx := context.Background()
	ex := loadFixture(t, "qwen2-tiny-Q8_0.gguf", local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, BlockSize: 8, NumBlocks: 32}})
	a, b := paragraph[:21], paragraph[5:17]
	wantA := prefillAll(t, ex, 8, a)  // A alone: logits after its 21st token
	wantB := prefillAll(t, ex, 16, b) // B alone
	idA, _ := ex.NewSeq(sampling.Params{})
	idB, _ := ex.NewSeq(sampling.Params{})
	blocksA, blocksB := []int32{24, 25, 26}, []int32{27, 28}
	// A's first 20 tokens, then one decode step of A batched with B's prefill
	if _, err := ex.Step(ctx, []executor.Work{{Seq: idA, Tokens: a[:20], Blocks: blocksA}}); err != nil {
		t.Fatal(err)
	}
	res, err := ex.Step(ctx, []executor.Work{
		{Seq: idA, Tokens: a[20:], Pos: 20, Blocks: blocksA, Sample: true, Logits: executor.LogitsLast},
		{Seq: idB, Tokens: b, Blocks: blocksB, Sample: true, Logits: executor.LogitsAll, TopLogprobs: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if d := maxAbsDiff(res[0].Logits[0], wantA[len(a)-1]); d > 1e-5 {
		t.Errorf("sequence A: batched logits differ by %g", d)
	}
	for p := range b {
		if d := maxAbsDiff(res[1].Logits[p], wantB[p]); d > 1e-5 {
			t.Errorf("sequence B position %d: batched logits differ by %g", p, d)
		}
	}
	if res[1].Token != argmax(wantB[len(b)-1]) || len(res[1].Top) != 3 || res[1].Top[0].Token != res[1].Token {
		t.Errorf("sequence B: token %d top %v, want argmax %d", res[1].Token, res[1].Top, argmax(wantB[len(b)-1]))
	}
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		x := float64(a[i]) - float64(b[i])
		if x < 0 {
			x = -x
		}
		if x > d || x != x {
			d = x
		}
	}
	return d
}

// TestStepBadRequests: a bad work fails only its own result.
func TestStepBadRequests(t *testing.T) {
	ctx := context.Background()
	path, err := archtest.Write(t.TempDir(), archtest.Config{Type: dtype.Q8_0})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := local.Load(ctx, path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, BlockSize: 8, NumBlocks: 16}})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	good, _ := ex.NewSeq(sampling.Params{})
	other, _ := ex.NewSeq(sampling.Params{})
	tests := []struct {
		name string
		work executor.Work
	}{
		{"unknown sequence", executor.Work{Seq: 999, Tokens: []int32{1}, Blocks: []int32{1}}},
		{"token out of vocab", executor.Work{Seq: other, Tokens: []int32{1, 64}, Blocks: []int32{1}}},
		{"no tokens", executor.Work{Seq: other, Blocks: []int32{1}}},
		{"blocks too short", executor.Work{Seq: other, Tokens: make([]int32, 9), Blocks: []int32{1}}},
		{"block out of range", executor.Work{Seq: other, Tokens: []int32{1}, Blocks: []int32{16}}},
		{"negative position", executor.Work{Seq: other, Tokens: []int32{1}, Pos: -1, Blocks: []int32{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ex.Step(ctx, []executor.Work{tt.work, {Seq: good, Tokens: []int32{1, 2, 3}, Blocks: []int32{0}, Sample: true}})
			if err != nil {
				t.Fatalf("step failed as a whole: %v", err)
			}
			if !errors.Is(res[0].Err, executor.ErrBadRequest) {
				t.Errorf("bad work: err %v, want ErrBadRequest", res[0].Err)
			}
			if res[1].Err != nil {
				t.Errorf("good work failed: %v", res[1].Err)
			}
		})
	}
	if _, err := ex.NewSeq(sampling.Params{TopP: 2}); !errors.Is(err, executor.ErrBadRequest) {
		t.Errorf("NewSeq with top_p 2: %v, want ErrBadRequest", err)
	}
}

func TestLoadLocalErrors(t *testing.T) {
	ctx := context.Background()
	path, err := archtest.Write(t.TempDir(), archtest.Config{Arch: "mamba"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.Load(ctx, path, local.Options{}); !errors.Is(err, arch.ErrUnsupported) {
		t.Errorf("unsupported arch: %v", err)
	}
	if _, err := local.Load(ctx, t.TempDir()+"/missing.gguf", local.Options{}); err == nil {
		t.Error("missing file loaded")
	}
}

func TestInfoAndMemory(t *testing.T) {
	ex := loadFixture(t, "stories260K.gguf", local.Options{})
	info, mem := ex.Info(), ex.Memory()
	// stories260K: 5 layers, 4 KV heads of 8 → 2*5*32*4 bytes per position
	want := executor.Info{Arch: "llama", NCtx: 2048, NCtxTrain: 2048, NVocab: 512, BlockSize: 16,
		NumBlocks: 4 * 128, BlockBytes: 16 * 2 * 5 * 32 * 4, Processor: "CPU", WeightsBytes: 1185376}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("info %+v, want %+v", info, want)
	}
	if mem.WeightsBytes != want.WeightsBytes || mem.KVBytes != int64(want.NumBlocks)*want.BlockBytes || mem.FreeBytes <= 0 {
		t.Errorf("memory %+v", mem)
	}
}

// fakeDevice is a CPU backend posing as a device with a fixed amount of
// free memory.
type fakeDevice struct {
	*cpu.Backend
	free   int64
	closed bool
}

func (d *fakeDevice) Name() string       { return "FAKE:0" }
func (d *fakeDevice) FreeMemory() int64  { return d.free }
func (d *fakeDevice) WeightBytes() int64 { return 12345 }
func (d *fakeDevice) Close() error       { d.closed = true; return d.Backend.Close() }

// TestDeviceSizesPoolFromFreeMemory: on a device the default pool holds
// what the memory left after the weights holds (less the reserve), never
// less than one sequence, and Info names the device.
func TestDeviceSizesPoolFromFreeMemory(t *testing.T) {
	const blockBytes = 16 * 2 * 5 * 32 * 4 // stories260K
	for _, tc := range []struct {
		name string
		free int64
		want int
	}{
		{"roomy", 4 << 30, 4 * 128},              // every sequence fits
		{"tight", 512<<20 + 300*blockBytes, 300}, // the reserve is 512 MiB (a tenth is less)
		{"starved", 100 << 20, 128},              // below the reserve: one sequence
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := &fakeDevice{Backend: cpu.New(1), free: tc.free}
			ex := loadFixture(t, "stories260K.gguf", local.Options{Device: dev})
			info := ex.Info()
			if info.Processor != "FAKE:0" || info.NumBlocks != tc.want {
				t.Errorf("processor %q, %d blocks; want FAKE:0, %d", info.Processor, info.NumBlocks, tc.want)
			}
			if mem := ex.Memory(); mem.FreeBytes != tc.free || mem.WeightsBytes != 12345 || info.WeightsBytes != 12345 {
				t.Errorf("memory %+v, weights in info %d; want the device's free %d and weights 12345", mem, info.WeightsBytes, tc.free)
			}
			ex.Close()
			if !dev.closed {
				t.Error("the executor did not close its device")
			}
		})
	}
}
