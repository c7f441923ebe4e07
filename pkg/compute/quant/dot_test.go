package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

func mustActivations(t testing.TB, typ dtype.Type, x []float32) []byte {
	t.Helper()
	b := make([]byte, ActivationBytes(typ, len(x)))
	if err := QuantizeActivations(typ, x, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVecDotMatchesFloatDot checks VecDot against the float64 dot product of
// the dequantized weight row and the dequantized activations.
func TestVecDotMatchesFloatDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range weightTypes {
		for _, n := range []int{256, 4096} {
			t.Run(typ.String(), func(t *testing.T) {
				w := mustQuantize(t, typ, gaussian(r, n, 0.05))
				x := gaussian(r, n, 1)
				x[7] = 9 // an outlier, as real activations have
				xq := mustActivations(t, typ, x)
				if err := CheckVecDot(typ, w, xq, n); err != nil {
					t.Fatal(err)
				}
				wf := make([]float32, n)
				xf := make([]float32, n)
				if err := Dequantize(typ, w, wf); err != nil {
					t.Fatal(err)
				}
				if err := Dequantize(VecDotType(typ), xq, xf); err != nil {
					t.Fatal(err)
				}
				var ref, mag float64
				for i := range wf {
					p := float64(wf[i]) * float64(xf[i])
					ref += p
					mag += math.Abs(p)
				}
				tol := 2e-6*mag + 1e-9
				if VecDotType(typ) == dtype.Q8_1 {
					// the Q8_1 sum term s = d·Σq is stored as F16
					for b := 0; b < n/32; b++ {
						m := float64(fp16(w, b*typ.TypeSize()+2))
						s := float64(fp16(xq, b*bytesQ8_1+2))
						tol += math.Abs(m*s) * 1e-3
					}
				}
				got := float64(VecDot(typ, w, xq, n))
				if math.Abs(got-ref) > tol {
					t.Errorf("n=%d: VecDot = %.9g, float dot = %.9g (|diff| %.3g > tol %.3g)", n, got, ref, math.Abs(got-ref), tol)
				}
			})
		}
	}
}

func TestVecDotNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1024
	x := gaussian(r, n, 1)
	for _, typ := range weightTypes {
		w := mustQuantize(t, typ, gaussian(r, n, 0.05))
		xq := make([]byte, ActivationBytes(typ, n))
		allocs := testing.AllocsPerRun(20, func() {
			if err := QuantizeActivations(typ, x, xq); err != nil {
				t.Fatal(err)
			}
			_ = VecDot(typ, w, xq, n)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per QuantizeActivations+VecDot", typ, allocs)
		}
	}
}

func q8Bytes(b []byte, off, n int) []int8 {
	out := make([]int8, n)
	for i := range out {
		out[i] = int8(b[off+i])
	}
	return out
}

func equalInt8(a []int8, b []int8) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQ8_0ActivationsRamp(t *testing.T) {
	x := make([]float32, 32)
	for j := range x {
		x[j] = float32(j-16) / 16 // -1 .. 0.9375
	}
	b := mustActivations(t, dtype.Q4_0, x)
	if d := binary.LittleEndian.Uint16(b); d != 0x2008 { // fp16(1/127)
		t.Errorf("d = %#04x, want 0x2008", d)
	}
	want := []int8{-127, -119, -111, -103, -95, -87, -79, -71, -64, -56, -48, -40, -32, -24, -16, -8,
		0, 8, 16, 24, 32, 40, 48, 56, 64, 71, 79, 87, 95, 103, 111, 119}
	if got := q8Bytes(b, 2, 32); !equalInt8(got, want) {
		t.Errorf("qs = %v\nwant %v", got, want)
	}
}

// tieVector has max|x| = 127 so that q = round(x) exactly: it separates
// ggml-cpu's round-to-nearest-even from the reference quantizer's roundf.
func tieVector() []float32 {
	x := make([]float32, 32)
	copy(x, []float32{127, 0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -127, 0.49, -1.51})
	return x
}

func TestQ8ActivationsRoundHalfEven(t *testing.T) {
	x := tieVector()
	wantEven := []int8{127, 0, 2, 2, 0, -2, 4, -127, 0, -2}
	wantAway := []int8{127, 1, 2, 3, -1, -3, 4, -127, 0, -2}

	b := mustActivations(t, dtype.Q8_0, x)
	if d := binary.LittleEndian.Uint16(b); d != 0x3C00 {
		t.Errorf("Q8_0 d = %#04x, want 0x3C00", d)
	}
	if got := q8Bytes(b, 2, 10); !equalInt8(got, wantEven) {
		t.Errorf("Q8_0 activations %v, want %v", got, wantEven)
	}

	b = mustActivations(t, dtype.Q5_1, x) // Q8_1
	if d, s := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]); d != 0x3C00 || s != 0x4400 {
		t.Errorf("Q8_1 d, s = %#04x, %#04x, want 0x3C00, 0x4400 (s = 1·Σq = 4)", d, s)
	}
	if got := q8Bytes(b, 4, 10); !equalInt8(got, wantEven) {
		t.Errorf("Q8_1 activations %v, want %v", got, wantEven)
	}

	ref := mustQuantize(t, dtype.Q8_0, x)
	if got := q8Bytes(ref, 2, 10); !equalInt8(got, wantAway) {
		t.Errorf("Q8_0 reference quantizer %v, want %v", got, wantAway)
	}
}

func TestQ8KActivations(t *testing.T) {
	x := make([]float32, 256)
	for j := range x {
		x[j] = float32(j - 128) // max |x| is x[0] = -128: iscale = 127/128
	}
	b := mustActivations(t, dtype.Q4_K, x)
	if d := binary.LittleEndian.Uint32(b); d != 0x3f810204 { // 1/(127/128) in float32
		t.Errorf("d bits = %#08x, want 0x3f810204", d)
	}
	q := q8Bytes(b, 4, 256)
	for idx, want := range map[int]int8{0: -127, 1: -126, 2: -125, 64: -64, 128: 0, 190: 62, 191: 63, 192: 64, 193: 64, 255: 126} {
		if q[idx] != want {
			t.Errorf("q[%d] = %d, want %d", idx, q[idx], want)
		}
	}
	wantBsums := []int16{-1912, -1656, -1400, -1144, -904, -648, -392, -136, 120, 376, 632, 888, 1129, 1384, 1640, 1896}
	for j, want := range wantBsums {
		if got := int16(binary.LittleEndian.Uint16(b[260+2*j:])); got != want {
			t.Errorf("bsums[%d] = %d, want %d", j, got, want)
		}
	}
}

func TestFloatActivations(t *testing.T) {
	x := []float32{1, 1 + 0x1p-11, 65520, 0x1p-25, 1 + 0x1p-8}
	b := mustActivations(t, dtype.F16, x)
	for i, want := range []uint16{0x3C00, 0x3C00, 0x7C00, 0x0000, 0x3C04} {
		if got := binary.LittleEndian.Uint16(b[2*i:]); got != want {
			t.Errorf("F16 activation %d = %#04x, want %#04x", i, got, want)
		}
	}
	b = mustActivations(t, dtype.BF16, x)
	for i, want := range []uint16{0x3F80, 0x3F80, 0x4780, 0x3300, 0x3F80} {
		if got := binary.LittleEndian.Uint16(b[2*i:]); got != want {
			t.Errorf("BF16 activation %d = %#04x, want %#04x", i, got, want)
		}
	}
	b = mustActivations(t, dtype.F32, x)
	for i, v := range x {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); got != v {
			t.Errorf("F32 activation %d = %g, want %g", i, got, v)
		}
	}
}
