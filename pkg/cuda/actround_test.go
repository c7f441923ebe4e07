package cuda

import (
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
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
