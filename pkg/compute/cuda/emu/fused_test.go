package emu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// sameBits fails unless got and want are equal bit for bit: a fused kernel
// does what the kernels it stands for do.
func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d = %g, want %g", name, i, got[i], want[i])
		}
	}
}

func TestAddRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	// rows up to 4096 stay in registers and shared memory; 4352 and 8448 do not
	for _, shape := range [][2]int{{1, 1}, {1, 31}, {3, 256}, {2, 1000}, {4, 3000}, {2, 2560}, {2, 4096}, {2, 4352}, {1, 8448}, {3, 128}, {2, 1024}} {
		rows, cols := shape[0], shape[1]
		name := fmt.Sprintf("%d×%d", rows, cols)
		x, y, w := randVec(r, rows*cols, 4), randVec(r, rows*cols, 4), randVec(r, cols, 2)
		const eps = 1e-6
		wantX, wantOut := append([]float32(nil), x...), nanVec(rows*cols)
		must(t, Launch("hx_add", grid1D(rows*cols), dim(256), wantX, y, rows*cols))
		must(t, Launch("hx_rmsnorm", dim(rows), dim(256), wantOut, wantX, w, cols, float32(eps)))
		gotX, gotOut := append([]float32(nil), x...), nanVec(rows*cols)
		must(t, Launch("hx_add_rmsnorm", dim(rows), dim(256), gotOut, gotX, y, w, cols, float32(eps)))
		sameBits(t, name+" x", gotX, wantX)
		sameBits(t, name+" out", gotOut, wantOut)
		if cols%256 != 0 {
			continue
		}
		// hx_add_rmsnorm_q8k: the same, and out rounded as hx_round_q8k
		// (values and records)
		wantR, wantQ := nanVec(rows*cols), q8kRecords(rows*cols)
		must(t, Launch("hx_round_q8k", dim((rows*cols+1023)/1024), dim(128), wantR, wantQ, wantOut, rows*cols))
		gotX, gotOut, gotR, gotQ := append([]float32(nil), x...), nanVec(rows*cols), nanVec(rows*cols), q8kRecords(rows*cols)
		must(t, Launch("hx_add_rmsnorm_q8k", dim(rows), dim(256), gotOut, gotR, gotQ, gotX, y, w, cols, float32(eps)))
		sameBits(t, name+" q8k x", gotX, wantX)
		sameBits(t, name+" q8k out", gotOut, wantOut)
		sameBits(t, name+" q8k rounded", gotR, wantR)
		sameRecords(t, name+" q8k records", gotQ, wantQ)
		// hx_rmsnorm_q8k: hx_rmsnorm, and out rounded
		gotOut, gotR, gotQ = nanVec(rows*cols), nanVec(rows*cols), q8kRecords(rows*cols)
		must(t, Launch("hx_rmsnorm_q8k", dim(rows), dim(256), gotOut, gotR, gotQ, wantX, w, cols, float32(eps)))
		sameBits(t, name+" rmsnorm q8k out", gotOut, wantOut)
		sameBits(t, name+" rmsnorm q8k rounded", gotR, wantR)
		sameRecords(t, name+" rmsnorm q8k records", gotQ, wantQ)
	}
}

func TestRMSNorm2(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2))
	for _, rows := range [][2]int{{1, 1}, {16, 8}, {3, 5}} {
		const cols, eps = 128, 1e-6
		for _, inPlace := range []bool{false, true} {
			name := fmt.Sprintf("rows %v in place %v", rows, inPlace)
			x1, x2 := randVec(r, rows[0]*cols, 4), randVec(r, rows[1]*cols, 4)
			w1, w2 := randVec(r, cols, 2), randVec(r, cols, 2)
			want1, want2 := nanVec(len(x1)), nanVec(len(x2))
			must(t, Launch("hx_rmsnorm", dim(rows[0]), dim(256), want1, x1, w1, cols, float32(eps)))
			must(t, Launch("hx_rmsnorm", dim(rows[1]), dim(256), want2, x2, w2, cols, float32(eps)))
			got1, got2 := nanVec(len(x1)), nanVec(len(x2))
			in1, in2 := x1, x2
			if inPlace {
				got1, got2 = append([]float32(nil), x1...), append([]float32(nil), x2...)
				in1, in2 = got1, got2
			}
			must(t, Launch("hx_rmsnorm2", dim(rows[0]+rows[1]), dim(256), got1, in1, w1, rows[0], got2, in2, w2, cols,
				float32(eps)))
			sameBits(t, name+" first", got1, want1)
			sameBits(t, name+" second", got2, want2)
		}
	}
}

// ropeCase is a shape of the fused RoPE kernels' tests.
type ropeCase struct {
	qHeads, kHeads, headDim, dims, neox int
	factors                             []float32 // frequency factors, or nil
}

// ropeCases are Qwen3's heads, a partial rotation with one key head, and
// frequency factors (all ≥ 1), then more.
func ropeCases(r *rand.Rand, more ...ropeCase) []ropeCase {
	factors := randVec(r, 32, 1)
	for i := range factors {
		factors[i] = 1 + float32(math.Abs(float64(factors[i])))
	}
	return append([]ropeCase{{16, 8, 128, 128, 1, nil}, {4, 1, 64, 32, 0, nil}, {2, 2, 64, 64, 1, factors}}, more...)
}

func TestRoPE2Store(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	pos := []int32{0, 5, 4095}
	for _, tt := range ropeCases(r) {
		name := fmt.Sprintf("%+v", tt)
		q, k := randVec(r, len(pos)*tt.qHeads*tt.headDim, 3), randVec(r, len(pos)*tt.kHeads*tt.headDim, 3)
		const base, scale = float32(1e6), float32(0.5)
		wantQ, wantK := append([]float32(nil), q...), append([]float32(nil), k...)
		half := tt.dims / 2
		must(t, Launch("hx_rope", grid1D(len(pos)*tt.qHeads*half), dim(256), wantQ, pos, len(pos), tt.qHeads,
			tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))
		must(t, Launch("hx_rope", grid1D(len(pos)*tt.kHeads*half), dim(256), wantK, pos, len(pos), tt.kHeads,
			tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))

		// hx_rope2_store_*: hx_rope of q and of k, then hx_store_kv_* of k and v
		kvDim, slots := tt.kHeads*tt.headDim, []int32{5, 0, 9}
		v := randVec(r, len(pos)*kvDim, 3)
		n := len(pos)*(tt.qHeads+tt.kHeads)*half + len(pos)*kvDim
		wantKC, wantVC := nanVec(12*kvDim), nanVec(12*kvDim)
		must(t, Launch("hx_store_kv_f32", grid1D(len(pos)*kvDim), dim(256), wantKC, wantVC, wantK, v, slots, len(pos), kvDim))
		gotQ, gotK := append([]float32(nil), q...), append([]float32(nil), k...)
		gotKC, gotVC := nanVec(12*kvDim), nanVec(12*kvDim)
		must(t, Launch("hx_rope2_store_f32", grid1D(n), dim(256), gotKC, gotVC, gotQ, gotK, v, pos, slots, len(pos),
			tt.qHeads, tt.kHeads, tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))
		sameBits(t, name+" store q", gotQ, wantQ)
		sameBits(t, name+" store k", gotK, wantK)
		sameBits(t, name+" store kc", gotKC, wantKC)
		sameBits(t, name+" store vc", gotVC, wantVC)
		wantKH, wantVH := make([]uint16, 12*kvDim), make([]uint16, 12*kvDim)
		must(t, Launch("hx_store_kv_f16", grid1D(len(pos)*kvDim), dim(256), wantKH, wantVH, wantK, v, slots, len(pos), kvDim))
		gotQ, gotK = append([]float32(nil), q...), append([]float32(nil), k...)
		gotKH, gotVH := make([]uint16, 12*kvDim), make([]uint16, 12*kvDim)
		must(t, Launch("hx_rope2_store_f16", grid1D(n), dim(256), gotKH, gotVH, gotQ, gotK, v, pos, slots, len(pos),
			tt.qHeads, tt.kHeads, tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))
		if !slices.Equal(gotKH, wantKH) || !slices.Equal(gotVH, wantVH) {
			t.Errorf("%s: hx_rope2_store_f16 stored other bits than hx_rope and hx_store_kv_f16", name)
		}
	}
}

// TestNormRoPE2Store: hx_norm_rope2_store_* gives what hx_rmsnorm2 of
// the q and k heads followed by hx_rope2_store_* gives, bit for bit, for
// both stores: heads of 128, 64 and 80 values (a block not a whole number
// of warps), partial rotations and frequency factors.
func TestNormRoPE2Store(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 4))
	pos := []int32{0, 5, 4095}
	for _, tt := range ropeCases(r, ropeCase{3, 1, 80, 64, 0, nil}, ropeCase{2, 1, 256, 256, 1, nil}) {
		name := fmt.Sprintf("%+v", tt)
		q, k := randVec(r, len(pos)*tt.qHeads*tt.headDim, 3), randVec(r, len(pos)*tt.kHeads*tt.headDim, 3)
		qw, kw := randVec(r, tt.headDim, 2), randVec(r, tt.headDim, 2)
		const base, scale, eps = float32(1e6), float32(0.5), float32(1e-6)
		kvDim, slots := tt.kHeads*tt.headDim, []int32{5, 0, 9}
		v := randVec(r, len(pos)*kvDim, 3)
		n := len(pos)*(tt.qHeads+tt.kHeads)*(tt.dims/2) + len(pos)*kvDim
		rq, rk := len(pos)*tt.qHeads, len(pos)*tt.kHeads
		grid, block := dim(len(pos)*(tt.qHeads+2*tt.kHeads)), dim((tt.headDim+31)/32*32)
		for _, f16 := range []bool{false, true} {
			wantQ, wantK := append([]float32(nil), q...), append([]float32(nil), k...)
			gotQ, gotK := append([]float32(nil), q...), append([]float32(nil), k...)
			must(t, Launch("hx_rmsnorm2", dim(rq+rk), dim(256), wantQ, wantQ, qw, rq, wantK, wantK, kw, tt.headDim, eps))
			var wantKC, wantVC, gotKC, gotVC Arg = nanVec(12 * kvDim), nanVec(12 * kvDim), nanVec(12 * kvDim), nanVec(12 * kvDim)
			suffix := "f32"
			if f16 {
				wantKC, wantVC = make([]uint16, 12*kvDim), make([]uint16, 12*kvDim)
				gotKC, gotVC = make([]uint16, 12*kvDim), make([]uint16, 12*kvDim)
				suffix = "f16"
			}
			must(t, Launch("hx_rope2_store_"+suffix, grid1D(n), dim(256), wantKC, wantVC, wantQ, wantK, v, pos, slots,
				len(pos), tt.qHeads, tt.kHeads, tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))
			must(t, Launch("hx_norm_rope2_store_"+suffix, grid, block, gotKC, gotVC, gotQ, gotK, v, qw, kw, eps, pos, slots,
				len(pos), tt.qHeads, tt.kHeads, tt.headDim, tt.dims, base, scale, tt.factors, tt.neox))
			name := fmt.Sprintf("%s %s", name, suffix)
			sameBits(t, name+" q", gotQ, wantQ)
			sameBits(t, name+" k", gotK, wantK)
			if f16 {
				if !slices.Equal(gotKC.([]uint16), wantKC.([]uint16)) || !slices.Equal(gotVC.([]uint16), wantVC.([]uint16)) {
					t.Errorf("%s: stored other bits than hx_rmsnorm2 and hx_rope2_store", name)
				}
				continue
			}
			sameBits(t, name+" kc", gotKC.([]float32), wantKC.([]float32))
			sameBits(t, name+" vc", gotVC.([]float32), wantVC.([]float32))
		}
	}
}

func TestArgMaxRows(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tt := range []struct{ cols, block, slices int }{
		{1000, 1024, 1}, {1000, 256, 1}, {5003, 1024, 1}, {9000, 32, 1},
		{9000, 256, 5}, {5003, 256, 3}, {1000, 32, 64}, {7, 32, 4}, // slices that split ties, and slices with nothing
	} {
		r := rand.New(rand.NewPCG(11, uint64(tt.cols)))
		cols := tt.cols
		x := make([]float32, 6*cols)
		for i := range x {
			x[i] = float32(r.IntN(40)) // ties
		}
		for i := cols; i < 2*cols; i++ { // row 1: nothing finite
			x[i] = []float32{nan, inf, -inf}[i%3]
		}
		if cols > 900 {
			x[2*cols+5], x[2*cols+900] = inf, nan // row 2: +Inf and NaN never win
			x[3*cols+777], x[3*cols+778], x[4*cols-1] = 100, 100, 100
		}
		x[5*cols] = float32(math.Copysign(0, -1)) // row 5 holds zeros of both signs, −0 first
		for i := 5*cols + 1; i < 6*cols; i++ {
			x[i] = min(x[i], 0)
		}
		rows := []int32{0, 1, 2, 3, 5, 3}
		keys := make([]uint64, len(rows)) // zeros
		must(t, Launch("hx_argmax_rows", [3]int{len(rows), tt.slices, 1}, dim(tt.block), keys, x, rows, cols))
		got := make([]int32, len(rows))
		for b := range got {
			key := keys[b]
			got[b] = -1
			if key != 0 {
				got[b] = int32(0xffffffff - uint32(key))
			}
		}
		for b, row := range rows {
			want := int32(-1)
			best := float32(math.Inf(-1))
			for i, v := range x[int(row)*cols : int(row+1)*cols] {
				if v > best && v < inf {
					best, want = v, int32(i)
				}
			}
			if got[b] != want {
				t.Errorf("%+v row %d: argmax %d, want %d", tt, row, got[b], want)
			}
		}
		if cols > 778 && got[3] != 777 {
			t.Errorf("%+v tie: %d, want the lower index 777", tt, got[3])
		}
	}
}

// TestRoundActivations: hx_round_* give the CPU's activations
// (quant.QuantizeActivations, then dequantized) bit for bit, including
// zero blocks, ties for the largest magnitude and outliers.
// q8kRecords returns room for the Q8_K records of n values, filled with a
// byte no rounding writes everywhere (-128) so that a record left unwritten
// shows.
func q8kRecords(n int) []byte {
	return bytes.Repeat([]byte{0x80}, n/256*Q8KRecord)
}

// sameRecords fails the test unless the Q8_K records got and want have the
// same bytes and scales (the padding aside).
func sameRecords(t *testing.T, name string, got, want []byte) {
	t.Helper()
	for b := 0; b < len(want)/Q8KRecord; b++ {
		g, w := got[b*Q8KRecord:][:260], want[b*Q8KRecord:][:260]
		if !bytes.Equal(g, w) {
			t.Fatalf("%s: record %d differs", name, b)
		}
	}
}

// TestQ8KRecord: the Go constant is the kernels' HX_Q8K_REC.
func TestQ8KRecord(t *testing.T) {
	if got := q8kRecord(); got != Q8KRecord {
		t.Fatalf("HX_Q8K_REC is %d, Q8KRecord %d", got, Q8KRecord)
	}
}

func TestRoundActivations(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	for _, tt := range []struct {
		kernel string
		weight dtype.Type
		block  int
		grid   func(n int) int
	}{
		{"hx_round_q8k", dtype.Q4_K, 256, func(n int) int { return (n+1023)/1024 + 1 }},
		{"hx_round_q8_0", dtype.Q8_0, 32, func(n int) int { return (n+127)/128 + 1 }},
		{"hx_round_q8_0", dtype.Q4_1, 32, func(n int) int { return (n+127)/128 + 1 }},
	} {
		for _, n := range []int{256, 1024, 4096 + 256} {
			x := randVec(r, n, 3)
			for i := 0; i < 32; i++ { // a zero block
				x[i] = 0
			}
			x[n-10], x[n-9] = -9, 9 // a tie for the largest magnitude (the first, negative, wins)
			x[40] = -40             // an outlier
			act := quant.VecDotType(tt.weight)
			need, err := act.RowBytes(int64(n))
			if err != nil {
				t.Fatal(err)
			}
			q := make([]byte, need)
			if err := quant.QuantizeActivations(tt.weight, x, q); err != nil {
				t.Fatal(err)
			}
			want := make([]float32, n)
			if err := quant.Dequantize(act, q, want); err != nil {
				t.Fatal(err)
			}
			got := nanVec(n)
			name := fmt.Sprintf("%s for %s, n=%d", tt.kernel, tt.weight, n)
			if act != dtype.Q8_K {
				must(t, Launch(tt.kernel, dim(tt.grid(n)), dim(128), got, x, n))
				sameBits(t, name, got, want)
				continue
			}
			// Q8_K: also the records, byte for byte the CPU's blocks
			// ({f32 d; i8 qs[256]; i16 bsums[16]}) without the sums
			recs := q8kRecords(n)
			must(t, Launch(tt.kernel, dim(tt.grid(n)), dim(128), got, recs, x, n))
			sameBits(t, name, got, want)
			for b := 0; b < n/256; b++ {
				rec, blk := recs[b*Q8KRecord:], q[b*292:]
				if !bytes.Equal(rec[:256], blk[4:260]) || !bytes.Equal(rec[256:260], blk[:4]) {
					t.Fatalf("%s: record %d differs from the CPU's Q8_K block", name, b)
				}
			}
		}
	}
}
