package emu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// weightTypes are the formats with kernels: the matvec and (for the
// quantized ones) dequantization kernels, and column counts to test (whole
// blocks).
var weightTypes = []struct {
	typ    dtype.Type
	suffix string
	cols   []int
}{
	{dtype.F32, "f32", []int{1, 33, 100}},
	{dtype.F16, "f16", []int{1, 33, 100}},
	{dtype.Q8_0, "q8_0", []int{32, 96, 512}},
	{dtype.Q4_0, "q4_0", []int{32, 160, 512}},
	{dtype.Q4_K, "q4_k", []int{256, 768, 4096}},
	{dtype.Q5_K, "q5_k", []int{256, 768}},
	{dtype.Q6_K, "q6_k", []int{256, 768}},
}

// randWeight returns a random rows × cols weight of type typ (quantized by
// pkg/compute/quant) and its dequantized values: rows of different
// magnitudes, some blocks much smaller than the others (their scales span
// the range), a few large outliers.
func randWeight(t *testing.T, r *rand.Rand, typ dtype.Type, rows, cols int) (*compute.Weight, []float32) {
	t.Helper()
	src := make([]float32, rows*cols)
	for i := range src {
		scale := 0.5 + float64(i/cols%3)
		if i/32%5 == 3 {
			scale *= 0.01
		}
		src[i] = float32(r.NormFloat64() * scale)
		if r.IntN(97) == 0 {
			src[i] *= 8
		}
	}
	rb, err := typ.RowBytes(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, int(rb)*rows)
	if err := quant.Quantize(typ, src, data); err != nil {
		t.Fatal(err)
	}
	w, err := compute.NewWeight("w", typ, []int{cols, rows}, data)
	if err != nil {
		t.Fatal(err)
	}
	deq := make([]float32, rows*cols)
	if err := quant.Dequantize(typ, data, deq); err != nil {
		t.Fatal(err)
	}
	return w, deq
}

// weightArg is the kernel argument of a weight: []float32 for F32,
// []uint16 for F16, its bytes otherwise.
func weightArg(w *compute.Weight) Arg {
	if w.Type == dtype.F32 {
		f := make([]float32, len(w.Data)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(w.Data[4*i:]))
		}
		return f
	}
	if w.Type != dtype.F16 {
		return w.Data
	}
	h := make([]uint16, len(w.Data)/2)
	for i := range h {
		h[i] = binary.LittleEndian.Uint16(w.Data[2*i:])
	}
	return h
}

// activations returns what the matvec kernels of typ take for the
// activation rows x: for the K-quants, x rounded by hx_round_q8k and its
// Q8_K records, which they multiply (so the exact product to compare with
// is that of the rounded values); for the other formats x itself and no
// records.
func activations(t *testing.T, typ dtype.Type, x []float32) ([]float32, Arg) {
	t.Helper()
	if quant.VecDotType(typ) != dtype.Q8_K {
		return x, nil
	}
	n := len(x)
	xr, recs := nanVec(n), q8kRecords(n)
	must(t, Launch("hx_round_q8k", dim((n+1023)/1024), dim(128), xr, recs, x, n))
	return xr, recs
}

func TestMatVec(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(9, 1))
	for _, wt := range weightTypes {
		for _, cols := range wt.cols {
			for _, rows := range []int{1, 6, 13} {
				w, deq := randWeight(t, r, wt.typ, rows, cols)
				for _, nx := range []int{1, 2, 3, 4, 5, 6, 7, 8, 11} {
					name := fmt.Sprintf("%s %d×%d nx=%d", wt.typ, rows, cols, nx)
					x, xq := activations(t, wt.typ, randVec(r, nx*cols, 2))
					got := nanVec(nx * rows)
					must(t, Launch("hx_mv_"+wt.suffix, dim((rows+3)/4+1), dim(128), got, weightArg(w), x, xq, rows, cols, nx))

					xt, ot := tensor(t, be, nx, cols, x), tensor(t, be, nx, rows, nil)
					if err := be.MatMul(w, xt, ot); err != nil {
						t.Fatal(err)
					}
					cpu := values(t, be, ot)
					for j := 0; j < nx; j++ {
						for row := 0; row < rows; row++ {
							// the exact product of the dequantized weights
							// (the GPU's arithmetic up to summation order)
							// relative to Σ|w·x|; the CPU's, which
							// multiplies 8-bit activations (an error of up
							// to max|x|/254 per element, which averages out
							// only over long rows), relative to |w|·|x|
							var dot, mag, ww, xx float64
							for c := 0; c < cols; c++ {
								wv, xv := float64(deq[row*cols+c]), float64(x[j*cols+c])
								dot += wv * xv
								mag += math.Abs(wv * xv)
								ww, xx = ww+wv*wv, xx+xv*xv
							}
							g := float64(got[j*rows+row])
							if d := math.Abs(g - dot); !(d <= 1e-5*mag) {
								t.Fatalf("%s: out[%d][%d] = %g, the exact product %g (Σ|w·x| %g)", name, j, row, g, dot, mag)
							}
							norms, tol := math.Sqrt(ww*xx), 2e-3
							if cols < 256 {
								tol = 8e-3
							}
							if d := math.Abs(g - float64(cpu[j*rows+row])); !(d <= tol*norms) {
								t.Fatalf("%s: out[%d][%d] = %g, the CPU's %g (|w|·|x| %g)", name, j, row, g, cpu[j*rows+row], norms)
							}
						}
					}
				}
			}
		}
	}
}

func TestDequantize(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 1))
	for _, wt := range weightTypes {
		if wt.typ == dtype.F16 || wt.typ == dtype.F32 {
			continue
		}
		for _, cols := range wt.cols {
			for _, rows := range []int{1, 3} {
				w, deq := randWeight(t, r, wt.typ, rows, cols)
				got32 := nanVec(rows * cols)
				must(t, Launch("hx_dq32_"+wt.suffix, dim(rows+1), dim(256), got32, w.Data, rows, cols))
				for i, v := range deq {
					if math.Float32bits(got32[i]) != math.Float32bits(v) {
						t.Fatalf("dequantize %s %d×%d to F32: value %d = %g, the CPU's %g", wt.typ, rows, cols, i, got32[i], v)
					}
				}
			}
		}
	}
}

// TestEmbedRows checks the embedding lookup of every type against the
// CPU's dequantization, bit for bit, for repeated and out-of-order ids.
func TestEmbedRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	for _, wt := range weightTypes {
		cols := wt.cols[len(wt.cols)-1]
		const rows = 7
		w, deq := randWeight(t, r, wt.typ, rows, cols)
		ids := []int32{6, 0, 3, 3, 1}
		got := nanVec(len(ids) * cols)
		must(t, Launch("hx_rows_"+wt.suffix, dim(len(ids)+1), dim(256), got, weightArg(w), ids, len(ids), cols))
		for i, id := range ids {
			for j := 0; j < cols; j++ {
				if g, want := got[i*cols+j], deq[int(id)*cols+j]; g != want {
					t.Fatalf("%s row %d (id %d) element %d: %v, want %v", wt.typ, i, id, j, g, want)
				}
			}
		}
	}
}

// TestMatVec3: hx_mv3_* gives each weight exactly what hx_mv_* gives it
// alone, for two and three weights of different row counts, and leaves
// the rows past each weight's alone.
func TestMatVec3(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 3))
	for _, wt := range weightTypes {
		cols := wt.cols[len(wt.cols)-1]
		for _, rowSet := range [][]int{{6, 13}, {13, 1, 6}} {
			for _, nx := range []int{1, 3, 8, 11} {
				name := fmt.Sprintf("%s rows %v × %d nx=%d", wt.typ, rowSet, cols, nx)
				x, xq := activations(t, wt.typ, randVec(r, nx*cols, 2))
				var args []Arg
				var want, got [][]float32
				most := 0
				for _, rows := range rowSet {
					w, _ := randWeight(t, r, wt.typ, rows, cols)
					one := nanVec(nx * rows)
					must(t, Launch("hx_mv_"+wt.suffix, dim((rows+3)/4), dim(128), one, weightArg(w), x, xq, rows, cols, nx))
					out := nanVec(nx*rows + 1) // the last value must stay NaN
					want, got = append(want, one), append(got, out)
					args = append(args, out, weightArg(w), rows)
					most = max(most, rows)
				}
				for len(args) < 9 {
					args = append(args, nil, nil, 0)
				}
				args = append(args, x, xq, cols, nx)
				must(t, Launch("hx_mv3_"+wt.suffix, [3]int{(most+3)/4 + 1, len(rowSet), 1}, dim(128), args...))
				for i := range want {
					for k, v := range want[i] {
						if math.Float32bits(got[i][k]) != math.Float32bits(v) {
							t.Fatalf("%s: weight %d value %d = %g, hx_mv_%s alone %g", name, i, k, got[i][k], wt.suffix, v)
						}
					}
					if last := got[i][len(want[i])]; !math.IsNaN(float64(last)) {
						t.Fatalf("%s: weight %d: wrote past its rows (%g)", name, i, last)
					}
				}
			}
		}
	}
}

// TestGatedMatVec: hx_mvg_* gives what hx_mv_* of each weight followed by
// hx_swiglu gives, bit for bit.
func TestGatedMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	for _, wt := range weightTypes {
		cols := wt.cols[len(wt.cols)-1]
		for _, rows := range []int{1, 13} {
			for _, nx := range []int{1, 3, 8, 11} {
				name := fmt.Sprintf("%s %d×%d nx=%d", wt.typ, rows, cols, nx)
				x, xq := activations(t, wt.typ, randVec(r, nx*cols, 2))
				wg, _ := randWeight(t, r, wt.typ, rows, cols)
				wu, _ := randWeight(t, r, wt.typ, rows, cols)
				g, u, want := nanVec(nx*rows), nanVec(nx*rows), nanVec(nx*rows)
				must(t, Launch("hx_mv_"+wt.suffix, dim((rows+3)/4), dim(128), g, weightArg(wg), x, xq, rows, cols, nx))
				must(t, Launch("hx_mv_"+wt.suffix, dim((rows+3)/4), dim(128), u, weightArg(wu), x, xq, rows, cols, nx))
				must(t, Launch("hx_swiglu", grid1D(nx*rows), dim(256), want, g, u, nx*rows))
				got := nanVec(nx * rows)
				must(t, Launch("hx_mvg_"+wt.suffix, dim((rows+3)/4+1), dim(128), got, weightArg(wg), weightArg(wu), x, xq,
					rows, cols, nx))
				for k, v := range want {
					if math.Float32bits(got[k]) != math.Float32bits(v) {
						t.Fatalf("%s: value %d = %g, hx_mv_%s twice and hx_swiglu %g", name, k, got[k], wt.suffix, v)
					}
				}
			}
		}
	}
}

// TestTallMatVec: hx_mv2_* (two rows a warp) gives hx_mv_*'s bits for one
// activation row, odd and even row counts, and writes no row past them.
func TestTallMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 5))
	for _, wt := range weightTypes {
		for _, cols := range wt.cols {
			for _, rows := range []int{1, 2, 13, 14, 37} {
				name := fmt.Sprintf("%s %d×%d", wt.typ, rows, cols)
				x, xq := activations(t, wt.typ, randVec(r, cols, 2))
				w, _ := randWeight(t, r, wt.typ, rows, cols)
				want, got := nanVec(rows), nanVec(rows+1) // the last value must stay NaN
				must(t, Launch("hx_mv_"+wt.suffix, dim((rows+3)/4), dim(128), want, weightArg(w), x, xq, rows, cols, 1))
				must(t, Launch("hx_mv2_"+wt.suffix, dim((rows+7)/8+1), dim(128), got, weightArg(w), x, xq, rows, cols))
				for k, v := range want {
					if math.Float32bits(got[k]) != math.Float32bits(v) {
						t.Fatalf("%s: row %d = %g, hx_mv_%s %g", name, k, got[k], wt.suffix, v)
					}
				}
				if !math.IsNaN(float64(got[rows])) {
					t.Fatalf("%s: wrote past its rows (%g)", name, got[rows])
				}
			}
		}
	}
}
