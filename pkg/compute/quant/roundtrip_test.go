package quant

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

var allTypes = []dtype.Type{
	dtype.F32, dtype.F16, dtype.BF16, dtype.Q8_0, dtype.Q4_0, dtype.Q4_1, dtype.Q5_0,
	dtype.Q5_1, dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K, dtype.Q8_1, dtype.Q8_K,
}

var weightTypes = []dtype.Type{
	dtype.F32, dtype.F16, dtype.BF16, dtype.Q8_0, dtype.Q4_0, dtype.Q4_1, dtype.Q5_0,
	dtype.Q5_1, dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K,
}

func gaussian(r *rand.Rand, n int, std float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * std)
	}
	return x
}

func mustQuantize(t testing.TB, typ dtype.Type, x []float32) []byte {
	t.Helper()
	nb, err := typ.RowBytes(int64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, nb)
	if err := Quantize(typ, x, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func relRMS(a, ref []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(ref[i])
		num += d * d
		den += float64(ref[i]) * float64(ref[i])
	}
	return math.Sqrt(num / den)
}

func TestQuantizeRoundTrip(t *testing.T) {
	// Bounds are ~1.3x the errors measured on Gaussian data (and consistent
	// with the bits per weight: uniform-step error ≈ step/√12).
	bounds := map[dtype.Type]float64{
		dtype.F32: 0, dtype.F16: 3e-4, dtype.BF16: 2.5e-3,
		dtype.Q8_0: 7e-3, dtype.Q8_1: 7e-3, dtype.Q8_K: 9e-3,
		dtype.Q6_K: 2.3e-2, dtype.Q5_K: 4.6e-2, dtype.Q5_0: 5.5e-2, dtype.Q5_1: 5e-2,
		dtype.Q4_K: 9e-2, dtype.Q4_0: 1.1e-1, dtype.Q4_1: 1e-1,
		dtype.Q3_K: 1.9e-1, dtype.Q2_K: 3.8e-1,
	}
	r := rand.New(rand.NewPCG(7, 8))
	x := gaussian(r, 16*256, 0.1)
	for _, typ := range allTypes {
		t.Run(typ.String(), func(t *testing.T) {
			q := mustQuantize(t, typ, x)
			y := make([]float32, len(x))
			if err := Dequantize(typ, q, y); err != nil {
				t.Fatal(err)
			}
			e := relRMS(y, x)
			t.Logf("%s relative RMS error %.3g", typ, e)
			if e > bounds[typ] {
				t.Errorf("relative RMS error %.3g exceeds %.3g", e, bounds[typ])
			}
		})
	}
}

func TestQuantizeZeroAndConstantBlocks(t *testing.T) {
	for _, typ := range allTypes {
		for _, c := range []float32{0, 0.75, -3} {
			x := make([]float32, 256)
			for i := range x {
				x[i] = c
			}
			q := mustQuantize(t, typ, x)
			y := make([]float32, len(x))
			if err := Dequantize(typ, q, y); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				if math.IsNaN(float64(y[i])) || math.Abs(float64(y[i]-c)) > 0.02*math.Abs(float64(c))+1e-6 {
					t.Fatalf("%s constant %g: element %d = %g", typ, c, i, y[i])
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	unknown := dtype.Type(99)
	if err := Dequantize(unknown, nil, nil); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("Dequantize unknown type: %v", err)
	}
	if err := Dequantize(dtype.I32, make([]byte, 4), make([]float32, 1)); err == nil || !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("Dequantize I32: %v", err)
	} else if want := "I32"; !containsStr(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	if err := Quantize(dtype.Q4_0, make([]float32, 33), make([]byte, 100)); !errors.Is(err, ErrBufferSize) {
		t.Errorf("Quantize partial block: %v", err)
	}
	if err := Quantize(dtype.Q4_K, make([]float32, 256), make([]byte, 143)); !errors.Is(err, ErrBufferSize) {
		t.Errorf("Quantize short dst: %v", err)
	}
	for _, typ := range allTypes {
		n := typ.BlockSize() * 2
		need, _ := typ.RowBytes(int64(n))
		if err := Dequantize(typ, make([]byte, need-1), make([]float32, n)); !errors.Is(err, ErrBufferSize) {
			t.Errorf("Dequantize %s short src: %v", typ, err)
		}
	}
	for _, typ := range weightTypes {
		n := typ.BlockSize() * 256
		need := ActivationBytes(typ, n)
		if err := QuantizeActivations(typ, make([]float32, n), make([]byte, need-1)); !errors.Is(err, ErrBufferSize) {
			t.Errorf("QuantizeActivations %s short dst: %v", typ, err)
		}
		w := make([]byte, n/typ.BlockSize()*typ.TypeSize())
		if err := CheckVecDot(typ, w, make([]byte, need), n); err != nil {
			t.Errorf("CheckVecDot %s valid: %v", typ, err)
		}
		if err := CheckVecDot(typ, w[:len(w)-1], make([]byte, need), n); !errors.Is(err, ErrBufferSize) {
			t.Errorf("CheckVecDot %s short weights: %v", typ, err)
		}
		if err := CheckVecDot(typ, w, make([]byte, need-1), n); !errors.Is(err, ErrBufferSize) {
			t.Errorf("CheckVecDot %s short activations: %v", typ, err)
		}
	}
	if err := QuantizeActivations(dtype.Q8_K, make([]float32, 256), make([]byte, 292)); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("QuantizeActivations for Q8_K weights: %v", err)
	}
	if err := CheckVecDot(dtype.Q4_K, nil, nil, 100); !errors.Is(err, ErrBufferSize) {
		t.Errorf("CheckVecDot partial block: %v", err)
	}
	if got := ActivationBytes(dtype.Q4_K, 100); got != 0 {
		t.Errorf("ActivationBytes partial block = %d", got)
	}
	if !math.IsNaN(float64(VecDot(dtype.Q8_K, nil, nil, 0))) {
		t.Error("VecDot with an unsupported type should return NaN")
	}
}

func containsStr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestVecDotType(t *testing.T) {
	tests := map[dtype.Type]dtype.Type{
		dtype.Q4_0: dtype.Q8_0, dtype.Q5_0: dtype.Q8_0, dtype.Q8_0: dtype.Q8_0,
		dtype.Q4_1: dtype.Q8_1, dtype.Q5_1: dtype.Q8_1,
		dtype.Q2_K: dtype.Q8_K, dtype.Q3_K: dtype.Q8_K, dtype.Q4_K: dtype.Q8_K, dtype.Q5_K: dtype.Q8_K, dtype.Q6_K: dtype.Q8_K,
		dtype.F16: dtype.F16, dtype.BF16: dtype.BF16, dtype.F32: dtype.F32,
	}
	for w, want := range tests {
		if got := VecDotType(w); got != want {
			t.Errorf("VecDotType(%s) = %s, want %s", w, got, want)
		}
		if got, want := ActivationBytes(w, 512), 512/want.BlockSize()*want.TypeSize(); got != want {
			t.Errorf("ActivationBytes(%s, 512) = %d, want %d", w, got, want)
		}
	}
}
