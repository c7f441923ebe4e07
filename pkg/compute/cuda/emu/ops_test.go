package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// elementSizes are the element counts of the element-wise tests: one
// element, less than a block, exactly a block, several blocks and a tail.
var elementSizes = []int{1, 7, 256, 1000}

func TestGatedActivations(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range elementSizes {
		gate, up := randVec(r, n, 12), randVec(r, n, 2)
		gate[0] = 0
		g, u, o := tensor(t, be, 1, n, gate), tensor(t, be, 1, n, up), tensor(t, be, 1, n, nil)

		out := nanVec(n)
		must(t, Launch("hx_swiglu", grid1D(n), dim(256), out, gate, up, n))
		be.SwiGLU(g, u, o)
		check(t, fmt.Sprintf("swiglu n=%d", n), out, values(t, be, o), 1e-5, 1e-30)

		out = nanVec(n)
		must(t, Launch("hx_geglu", grid1D(n), dim(256), out, gate, up, n))
		// the CPU backend's GELU: ggml-cpu's F16 table (input and output
		// rounded to F16), which the kernel rounds alike
		be.GeGLU(g, u, o)
		check(t, fmt.Sprintf("geglu n=%d", n), out, values(t, be, o), 1e-6, 1e-30)
	}
}

func TestSoftcap(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(2, 1))
	for _, n := range elementSizes {
		for _, c := range []float32{30, 2.5} {
			x := randVec(r, n, 60)
			xt := tensor(t, be, 1, n, x)
			got := append([]float32(nil), x...)
			must(t, Launch("hx_softcap", grid1D(n), dim(256), got, n, c))
			be.Softcap(xt, c)
			check(t, fmt.Sprintf("softcap n=%d c=%g", n, c), got, values(t, be, xt), 1e-5, 1e-30)
		}
	}
}

func TestAddAndRows(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(3, 1))
	for _, shape := range [][2]int{{1, 1}, {1, 300}, {3, 7}, {5, 64}, {9, 130}} {
		rows, cols := shape[0], shape[1]
		n := rows * cols
		name := fmt.Sprintf("%d×%d", rows, cols)

		dst, src := randVec(r, n, 3), randVec(r, n, 3)
		d := tensor(t, be, rows, cols, dst)
		got := append([]float32(nil), dst...)
		must(t, Launch("hx_add", grid1D(n), dim(256), got, src, n))
		be.Add(d, tensor(t, be, rows, cols, src))
		exact(t, "add "+name, got, values(t, be, d))

		bias := randVec(r, cols, 1)
		x := tensor(t, be, rows, cols, dst)
		got = append([]float32(nil), dst...)
		must(t, Launch("hx_add_row", grid1D(n), dim(256), got, bias, rows, cols))
		be.AddRow(x, &compute.Vector{Data: bias})
		exact(t, "add_row "+name, got, values(t, be, x))

		// gather: rows picked with repeats, in any order
		idx := make([]int32, rows+2)
		for i := range idx {
			idx[i] = int32(r.IntN(rows))
		}
		gd := tensor(t, be, len(idx), cols, nil)
		got = nanVec(len(idx) * cols)
		must(t, Launch("hx_gather_rows", grid1D(len(idx)*cols), dim(256), got, src, idx, len(idx), cols))
		be.GatherRows(tensor(t, be, rows, cols, src), idx, gd)
		exact(t, "gather_rows "+name, got, values(t, be, gd))

		// scale rows to a permutation of some rows of dst; the others keep
		// their values
		to := make([]int32, 0, rows)
		for _, p := range r.Perm(rows + 2)[:rows] {
			to = append(to, int32(p))
		}
		scale := randVec(r, rows, 2)
		base := randVec(r, (rows+2)*cols, 1)
		sd := tensor(t, be, rows+2, cols, base)
		got = append([]float32(nil), base...)
		must(t, Launch("hx_scale_rows_to", grid1D(n), dim(256), got, src, to, scale, rows, cols))
		be.ScaleRowsTo(tensor(t, be, rows, cols, src), to, scale, sd)
		exact(t, "scale_rows_to "+name, got, values(t, be, sd))

		for _, k := range []int{1, 2, 3} {
			in := randVec(r, rows*k*cols, 5)
			od := tensor(t, be, rows, cols, nil)
			got = nanVec(n)
			must(t, Launch("hx_sum_row_groups", grid1D(n), dim(256), got, in, k, rows, cols))
			be.SumRowGroups(tensor(t, be, rows*k, cols, in), k, od)
			exact(t, fmt.Sprintf("sum_row_groups k=%d %s", k, name), got, values(t, be, od))
		}
	}
}

func TestF32ToF16(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 1))
	x := randVec(r, 1500, 70000) // some overflow to inf
	for i := 0; i < 200; i++ {
		x[i] = x[i] * 1e-9 // subnormal halves
		x[200+i] = quant.FP16ToFloat32(uint16(r.IntN(0x7c00))) + 0x1p-12*float32(r.IntN(3)-1)
	}
	for _, n := range []int{1, 255, len(x)} {
		got := make([]uint16, n)
		for i := range got {
			got[i] = 0xdead
		}
		must(t, Launch("hx_f32_to_f16", grid1D(n), dim(256), got, x[:n], n))
		want := make([]uint16, n)
		for i, v := range x[:n] {
			want[i] = quant.Float32ToFP16(v)
		}
		exact(t, fmt.Sprintf("f32_to_f16 n=%d", n), got, want)
	}
}

func TestStoreKV(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	const slots, kvDim = 40, 24
	for _, rows := range []int{1, 5} {
		k, v := randVec(r, rows*kvDim, 2), randVec(r, rows*kvDim, 2)
		slot := make([]int32, rows)
		for i, p := range r.Perm(slots)[:rows] {
			slot[i] = int32(p)
		}
		kc, vc := randVec(r, slots*kvDim, 1), randVec(r, slots*kvDim, 1)
		wantK, wantV := append([]float32(nil), kc...), append([]float32(nil), vc...)
		for i, s := range slot {
			copy(wantK[int(s)*kvDim:], k[i*kvDim:(i+1)*kvDim])
			copy(wantV[int(s)*kvDim:], v[i*kvDim:(i+1)*kvDim])
		}
		must(t, Launch("hx_store_kv_f32", grid1D(rows*kvDim), dim(256), kc, vc, k, v, slot, rows, kvDim))
		exact(t, "store_kv_f32 keys", kc, wantK)
		exact(t, "store_kv_f32 values", vc, wantV)

		kh, vh := make([]uint16, slots*kvDim), make([]uint16, slots*kvDim)
		wantKH, wantVH := make([]uint16, slots*kvDim), make([]uint16, slots*kvDim)
		for i, s := range slot {
			for j := 0; j < kvDim; j++ {
				wantKH[int(s)*kvDim+j] = quant.Float32ToFP16(k[i*kvDim+j])
				wantVH[int(s)*kvDim+j] = quant.Float32ToFP16(v[i*kvDim+j])
			}
		}
		must(t, Launch("hx_store_kv_f16", grid1D(rows*kvDim), dim(256), kh, vh, k, v, slot, rows, kvDim))
		exact(t, "store_kv_f16 keys", kh, wantKH)
		exact(t, "store_kv_f16 values", vh, wantVH)
	}
}

func TestRoPE(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(6, 1))
	ff := func(n int) []float32 {
		f := make([]float32, n)
		for i := range f {
			f[i] = 1 + 7*r.Float32()
		}
		return f
	}
	tests := []struct {
		name           string
		heads, headDim int
		rope           compute.Rope
	}{
		{"norm", 3, 64, compute.Rope{Mode: compute.RopeNorm, Dims: 64, Base: 10000, FreqScale: 1}},
		{"neox", 2, 128, compute.Rope{Mode: compute.RopeNeox, Dims: 128, Base: 1e6, FreqScale: 1}},
		{"norm partial scaled", 2, 64, compute.Rope{Mode: compute.RopeNorm, Dims: 32, Base: 10000, FreqScale: 0.25}},
		{"neox partial", 4, 80, compute.Rope{Mode: compute.RopeNeox, Dims: 40, Base: 10000, FreqScale: 1}},
		{"neox freq factors", 2, 128, compute.Rope{Mode: compute.RopeNeox, Dims: 128, Base: 500000, FreqScale: 1, FreqFactors: ff(64)}},
		{"norm freq factors scaled", 1, 64, compute.Rope{Mode: compute.RopeNorm, Dims: 64, Base: 500000, FreqScale: 0.5, FreqFactors: ff(32)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos := []int32{0, 1, 7, 300, 4095, 100000}
			width := tt.heads * tt.headDim
			x := randVec(r, len(pos)*width, 3)
			xt := tensor(t, be, len(pos), width, x)
			be.RoPE(xt, pos, tt.heads, tt.headDim, &tt.rope)
			want := values(t, be, xt)
			got := append([]float32(nil), x...)
			neox := 0
			if tt.rope.Mode == compute.RopeNeox {
				neox = 1
			}
			var factors []float32 // a nil slice: a null pointer
			if tt.rope.FreqFactors != nil {
				factors = tt.rope.FreqFactors
			}
			n := len(pos) * tt.heads * (tt.rope.Dims / 2)
			must(t, Launch("hx_rope", grid1D(n), dim(256), got, pos, len(pos), tt.heads, tt.headDim, tt.rope.Dims,
				tt.rope.Base, tt.rope.FreqScale, factors, neox))
			// a rotation keeps the pair's norm: compare against the head's
			// scale (values near 0 come from cancellation)
			for i := range want {
				d := math.Abs(float64(got[i] - want[i]))
				if tol := 1e-5 * 3 * math.Sqrt2; d > tol || got[i] != got[i] {
					row, h, e := i/width, i%width/tt.headDim, i%tt.headDim
					t.Fatalf("pos %d head %d elem %d: %g, the CPU's %g (was %g)", pos[row], h, e, got[i], want[i], x[i])
				}
			}
			for i := range x { // past dims: untouched
				if i%tt.headDim >= tt.rope.Dims && got[i] != x[i] {
					t.Fatalf("elem %d of a head past dims changed", i%tt.headDim)
				}
			}
		})
	}
}

func TestRMSNorm(t *testing.T) {
	be := newCPU(t)
	r := rand.New(rand.NewPCG(7, 1))
	for _, shape := range [][2]int{{1, 1}, {1, 31}, {3, 256}, {2, 1000}, {4, 3000}, {1, 5000}} {
		rows, cols := shape[0], shape[1]
		for _, inPlace := range []bool{false, true} {
			x, w := randVec(r, rows*cols, 4), randVec(r, cols, 2)
			const eps = 1e-6
			xt, ot := tensor(t, be, rows, cols, x), tensor(t, be, rows, cols, nil)
			be.RMSNorm(xt, &compute.Vector{Data: w}, eps, ot)
			want := values(t, be, ot)
			name := fmt.Sprintf("rmsnorm %d×%d in place %v", rows, cols, inPlace)
			if inPlace {
				got := append([]float32(nil), x...)
				must(t, Launch("hx_rmsnorm", dim(rows), dim(256), got, got, w, cols, float32(eps)))
				check(t, name, got, want, 1e-5, 1e-30)
				continue
			}
			got := nanVec(rows * cols)
			must(t, Launch("hx_rmsnorm", dim(rows), dim(256), got, x, w, cols, float32(eps)))
			check(t, name, got, want, 1e-5, 1e-30)
		}
	}
}
