package quant

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// buildRows quantizes nRows random rows of n elements of typ, stored stride
// bytes apart (stride >= the row size; the gap is filled with junk).
func buildRows(t *testing.T, r *rand.Rand, typ dtype.Type, n, nRows, pad int) ([]byte, int) {
	t.Helper()
	row := mustQuantize(t, typ, gaussian(r, n, 0.05))
	stride := len(row) + pad
	w := make([]byte, 0, nRows*stride)
	for i := 0; i < nRows; i++ {
		w = append(w, mustQuantize(t, typ, gaussian(r, n, math.Pow(10, float64(i%4)-3)))...)
		for j := 0; j < pad; j++ {
			w = append(w, byte(r.Uint32()))
		}
	}
	return w, stride
}

// TestVecDotRowsMatchesVecDot: the batched kernel is bit-identical to VecDot
// row by row, for every weight type, with packed and padded row strides (at
// the exact level the package's tests default to; the fast levels, where
// BitExact is false, agree within their rounding).
func TestVecDotRowsMatchesVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, typ := range weightTypes {
		for _, tc := range []struct{ n, rows, pad int }{{256, 1, 0}, {512, 37, 0}, {256, 9, 4}, {1024, 5, 12}} {
			w, stride := buildRows(t, r, typ, tc.n, tc.rows, tc.pad)
			xq := mustActivations(t, typ, gaussian(r, tc.n, 1))
			out := make([]float32, tc.rows+1)
			out[tc.rows] = 42 // past nRows: untouched
			if err := VecDotRows(typ, w, stride, tc.rows, xq, tc.n, out); err != nil {
				t.Fatalf("%s %+v: %v", typ, tc, err)
			}
			if !BitExact(typ) { // HELEXA_CPU_KERNELS=avx2 or avx512: the lanes' order, within rounding
				want := make([]float32, tc.rows)
				for i := range want {
					want[i] = VecDot(typ, w[i*stride:], xq, tc.n)
				}
				checkNearRows(t, typ, w, stride, xq, len(xq), tc.n, tc.rows, 1, out[:tc.rows], want)
				continue
			}
			for i := 0; i < tc.rows; i++ {
				want := VecDot(typ, w[i*stride:], xq, tc.n)
				if math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Fatalf("%s %+v row %d: VecDotRows %.9g (%#08x) != VecDot %.9g (%#08x)", typ, tc, i,
						out[i], math.Float32bits(out[i]), want, math.Float32bits(want))
				}
			}
			if out[tc.rows] != 42 {
				t.Fatalf("%s %+v: wrote past nRows", typ, tc)
			}
		}
	}
}

// TestFloatDotMisaligned: the in-place float views and the byte-decoding
// fallback (misaligned buffers) give the same bits.
func TestFloatDotMisaligned(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const n = 300
	for _, typ := range []dtype.Type{dtype.F32, dtype.F16, dtype.BF16} {
		w := mustQuantize(t, typ, gaussian(r, n, 1))
		xq := mustActivations(t, typ, gaussian(r, n, 1))
		shifted := make([]byte, len(w)+1)
		copy(shifted[1:], w)
		want := VecDot(typ, w, xq, n)
		if got := VecDot(typ, shifted[1:], xq, n); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("%s: misaligned weights give %.9g, aligned %.9g", typ, got, want)
		}
	}
}

func TestVecDotRowsErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	w, stride := buildRows(t, r, dtype.Q4_K, 256, 4, 0)
	xq := mustActivations(t, dtype.Q4_K, gaussian(r, 256, 1))
	out := make([]float32, 4)
	tests := []struct {
		name   string
		typ    dtype.Type
		w      []byte
		stride int
		rows   int
		xq     []byte
		n      int
		out    []float32
		want   error
	}{
		{"activation type as weight", dtype.Q8_K, w, stride, 4, xq, 256, out, ErrUnsupportedType},
		{"unknown type", dtype.Type(99), w, stride, 4, xq, 256, out, ErrUnsupportedType},
		{"partial block", dtype.Q4_K, w, stride, 4, xq, 100, out, ErrBufferSize},
		{"negative n", dtype.Q4_K, w, stride, 4, xq, -256, out, ErrBufferSize},
		{"negative rows", dtype.Q4_K, w, stride, -1, xq, 256, out, ErrBufferSize},
		{"stride shorter than a row", dtype.Q4_K, w, stride - 1, 4, xq, 256, out, ErrBufferSize},
		{"weights too short", dtype.Q4_K, w[:len(w)-1], stride, 4, xq, 256, out, ErrBufferSize},
		{"activations too short", dtype.Q4_K, w, stride, 4, xq[:len(xq)-1], 256, out, ErrBufferSize},
		{"outputs too short", dtype.Q4_K, w, stride, 4, xq, 256, out[:3], ErrBufferSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := VecDotRows(tt.typ, tt.w, tt.stride, tt.rows, tt.xq, tt.n, tt.out); !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
		})
	}
	if err := VecDotRows(dtype.Q4_K, nil, stride, 0, nil, 256, nil); err != nil {
		t.Errorf("zero rows: %v", err)
	}
}

// BenchmarkVecDotRows reports weight bytes per second over 1024 rows of 4096
// elements (compare with BenchmarkVecDot's row-at-a-time calls).
func BenchmarkVecDotRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 4))
	const rows = 1024
	for _, typ := range weightTypes {
		row := mustQuantize(b, typ, gaussian(r, benchN, 0.05))
		w := make([]byte, 0, rows*len(row))
		for i := 0; i < rows; i++ {
			w = append(w, row...)
		}
		xq := mustActivations(b, typ, gaussian(r, benchN, 1))
		out := make([]float32, rows)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				if err := VecDotRows(typ, w, len(row), rows, xq, benchN, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkNearRows fails unless got and want (rows × nX results) agree to the
// float error of either order of summation: a few ulps of the sum of the
// terms' magnitudes.
func checkNearRows(t *testing.T, typ dtype.Type, w []byte, rb int, xq []byte, xs, n, rows, nX int, got, want []float32) {
	t.Helper()
	for j := 0; j < nX; j++ {
		xv := dequantActivations(t, typ, xq[j*xs:(j+1)*xs], n)
		for i := 0; i < rows; i++ {
			wv := make([]float32, n)
			if err := Dequantize(typ, w[i*rb:(i+1)*rb], wv); err != nil {
				t.Fatal(err)
			}
			mag := 0.0
			for k := range wv {
				mag += math.Abs(float64(wv[k]) * float64(xv[k]))
			}
			g, p := got[j*rows+i], want[j*rows+i]
			if d := math.Abs(float64(g - p)); d > 1e-5*mag {
				t.Fatalf("row %d × activation %d: fast %.9g, portable %.9g (|Δ| %.3g > 1e-5 × Σ|w·x| = %.3g)", i, j, g, p, d, 1e-5*mag)
			}
		}
	}
}

// dequantActivations expands one quantized activation row (Q8_0 blocks for
// Q8_0 weights, Q8_K blocks for the K-quants) to floats.
func dequantActivations(t *testing.T, typ dtype.Type, xq []byte, n int) []float32 {
	out := make([]float32, n)
	switch typ {
	case dtype.Q8_0:
		for b := 0; b < n/32; b++ {
			d := fp16(xq, 34*b)
			for k := 0; k < 32; k++ {
				out[32*b+k] = d * float32(int8(xq[34*b+2+k]))
			}
		}
	default:
		for b := 0; b < n/256; b++ {
			blk := xq[292*b:]
			d := math.Float32frombits(uint32(blk[0]) | uint32(blk[1])<<8 | uint32(blk[2])<<16 | uint32(blk[3])<<24)
			for k := 0; k < 256; k++ {
				out[256*b+k] = d * float32(int8(blk[4+k]))
			}
		}
	}
	return out
}
