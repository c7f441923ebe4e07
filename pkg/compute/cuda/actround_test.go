package cuda

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

// TestNormRounding: once the products after AddRMSNorm have asked for
// hx_round_q8k, the norm rounds its output in the same launch and the next
// product takes that instead of rounding again, with the same bits as the
// separate ops; a write between the two makes the product round afresh.
func TestNormRounding(t *testing.T) {
	const cols, rows = 512, 8
	src := make([]float32, cols*rows)
	for i := range src {
		src[i] = float32(math.Sin(float64(i) * 0.37))
	}
	data := make([]byte, rows*cols/256*144)
	if err := quant.Quantize(dtype.Q4_K, src, data); err != nil {
		t.Fatal(err)
	}
	w, err := compute.NewWeight("w", dtype.Q4_K, []int{cols, rows}, data)
	if err != nil {
		t.Fatal(err)
	}
	nw := &compute.Vector{Name: "norm", Data: make([]float32, cols)}
	x0, y0 := make([]float32, cols), make([]float32, cols)
	for i := range x0 {
		nw.Data[i] = 1 + float32(i%7)/10
		x0[i], y0[i] = float32(math.Cos(float64(i))), float32(i%13)/5
	}
	// run is one step: x += y, out = norm(x), [out += y], res = w·out; it
	// returns res and the writes the product took.
	run := func(b *Backend, nw *compute.Vector, fused, between bool) ([]float32, uint64) {
		if err := b.PrepareVector(nw); err != nil {
			t.Fatal(err)
		}
		if err := b.Prepare(w); err != nil {
			t.Fatal(err)
		}
		tn := func() compute.Tensor {
			tt, err := b.NewTensor(1, cols)
			if err != nil {
				t.Fatal(err)
			}
			return tt
		}
		x, y, out := tn(), tn(), tn()
		res, err := b.NewTensor(1, rows)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Write(x, x0); err != nil {
			t.Fatal(err)
		}
		if err := b.Write(y, y0); err != nil {
			t.Fatal(err)
		}
		if fused {
			b.AddRMSNorm(x, y, nw, 1e-6, out)
		} else {
			b.Add(x, y)
			b.RMSNorm(x, nw, 1e-6, out)
		}
		if between {
			b.Add(out, y)
		}
		before := b.writes.n
		if err := b.MatMul(w, out, res); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, rows)
		if err := b.ReadRow(res, 0, got); err != nil {
			t.Fatal(err)
		}
		return got, b.writes.n - before
	}
	refNorm := &compute.Vector{Name: "norm", Data: nw.Data} // a vector is prepared for one backend
	ref := OpenEmulated(1 << 26)
	defer ref.Close()
	b := OpenEmulated(1 << 26)
	defer b.Close()
	for _, tc := range []struct {
		name    string
		between bool
		writes  uint64 // by the product: 2 rounding it, 1 taking the norm's
	}{
		{"first step: the product rounds and tells the norm", false, 2},
		{"the norm rounds", false, 1},
		{"a write between", true, 2},
		{"the norm rounds again", false, 1},
	} {
		want, _ := run(ref, refNorm, false, tc.between)
		got, writes := run(b, nw, true, tc.between)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: res[%d] = %g, the separate ops' %g", tc.name, i, got[i], want[i])
			}
		}
		if writes != tc.writes {
			t.Errorf("%s: the product took %d writes, want %d", tc.name, writes, tc.writes)
		}
	}
}

// launchCounter is a driver that counts its launches by kernel.
type launchCounter struct {
	driver
	n map[string]int
}

func (l *launchCounter) launch(name string, grid [3]int, block int, a *args) error {
	l.n[name]++
	return l.driver.launch(name, grid, block, a)
}

// TestNormsRound: in a decode step after the first, the norms before
// products with K-quant weights (the first layer's, which has no residual
// to add, and the output norm included) round their output in their own
// launch, so that only the products after attention and the gated
// product launch hx_round_q8k (two per layer); and the first step of a
// second session, rounded that way, gives the logits of the first
// session's first step, rounded in separate launches, bit for bit.
func TestNormsRound(t *testing.T) {
	if testing.Short() {
		t.Skip("emulates the GPU kernels of a model")
	}
	lc := &launchCounter{driver: &emuDriver{total: 1 << 30, inf: Info{Name: "emulated", Major: 9, TotalBytes: 1 << 30}},
		n: map[string]int{}}
	ex, err := local.Load(context.Background(), fixtures.Path(t, "models", "llama-q-Q4_K_M.gguf"),
		local.Options{LoadOptions: executor.LoadOptions{NumCtx: 128, NumBlocks: 8, Parallel: 1}, Device: newBackend(lc)})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	const layers = 2
	var first []float32
	for session := range 2 {
		s, err := executor.NewSession(ex, sampling.Params{})
		if err != nil {
			t.Fatal(err)
		}
		tok := int32(1)
		for step := range 3 {
			clear(lc.n)
			res, err := s.Prefill(context.Background(), []int32{tok}, executor.LogitsLast)
			if err != nil {
				t.Fatal(err)
			}
			tok = res.Token
			rounds, plain := lc.n["hx_round_q8k"], lc.n["hx_rmsnorm"]+lc.n["hx_add_rmsnorm"]
			switch {
			case session == 0 && step == 0:
				if rounds <= 2*layers {
					t.Fatalf("first step: %d hx_round_q8k launches (%v): the products never asked", rounds, lc.n)
				}
				first = res.Logits[0]
			case rounds != 2*layers || plain != 0:
				t.Errorf("session %d step %d: %d hx_round_q8k and %d unrounded norm launches, want %d and none: %v",
					session, step, rounds, plain, 2*layers, lc.n)
			case session == 1 && step == 0 && !slices.Equal(res.Logits[0], first):
				t.Errorf("the first step rounded by its norms gives other logits than rounded apart")
			}
		}
		s.Close()
	}
}
