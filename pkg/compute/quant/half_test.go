package quant

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestFloat32ToFP16EdgeCases(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3C00},
		{"minus two", -2, 0xC000},
		{"max half", 65504, 0x7BFF},
		{"just below overflow rounds down", 65519, 0x7BFF},
		{"overflow tie rounds to inf", 65520, 0x7C00},
		{"large overflows to inf", 1e10, 0x7C00},
		{"+inf", float32(math.Inf(1)), 0x7C00},
		{"-inf", float32(math.Inf(-1)), 0xFC00},
		{"NaN", float32(math.NaN()), 0x7E00},
		{"negative NaN", math.Float32frombits(0xFFC00001), 0xFE00},
		{"smallest normal", 0x1p-14, 0x0400},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"largest subnormal", 1023 * 0x1p-24, 0x03FF},
		{"half of smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"three quarters of smallest subnormal", 3 * 0x1p-26, 0x0001},
		{"1.5 smallest subnormal ties to even 2", 3 * 0x1p-25, 0x0002},
		{"2.5 smallest subnormal ties to even 2", 5 * 0x1p-25, 0x0002},
		{"below half of smallest subnormal", 0x1p-26, 0x0000},
		{"tie between 1 and next rounds to even 1", 1 + 0x1p-11, 0x3C00},
		{"tie above odd rounds up to even", 1 + 3*0x1p-11, 0x3C02},
		{"just above tie rounds up", 1 + 0x1p-11 + 0x1p-20, 0x3C01},
		{"float32 subnormal", 0x1p-140, 0x0000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Float32ToFP16(tc.in); got != tc.want {
				t.Errorf("Float32ToFP16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
}

func TestFP16ToFloat32EdgeCases(t *testing.T) {
	tests := []struct {
		in   uint16
		want float32
	}{
		{0x0000, 0},
		{0x3C00, 1},
		{0xC000, -2},
		{0x7BFF, 65504},
		{0x0001, 0x1p-24},
		{0x8001, -0x1p-24},
		{0x03FF, 1023 * 0x1p-24},
		{0x0400, 0x1p-14},
		{0x3555, 0.333251953125},
		{0x7C00, float32(math.Inf(1))},
		{0xFC00, float32(math.Inf(-1))},
	}
	for _, tc := range tests {
		if got := FP16ToFloat32(tc.in); got != tc.want {
			t.Errorf("FP16ToFloat32(%#04x) = %g, want %g", tc.in, got, tc.want)
		}
	}
	if f := FP16ToFloat32(0x7E00); !math.IsNaN(float64(f)) {
		t.Errorf("FP16ToFloat32(0x7E00) = %g, want NaN", f)
	}
	if b := math.Float32bits(FP16ToFloat32(0x8000)); b != 0x80000000 {
		t.Errorf("FP16ToFloat32(0x8000) bits = %#x, want -0", b)
	}
}

// TestFP16RoundTripAll checks every non-NaN half survives half→float→half.
func TestFP16RoundTripAll(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		if h&0x7C00 == 0x7C00 && h&0x3FF != 0 {
			continue // NaN
		}
		if got := Float32ToFP16(FP16ToFloat32(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip of %#04x gave %#04x", h, got)
		}
	}
}

// TestFloat32ToFP16MatchesNearestEven compares against an independent
// search over all finite halves (nearest value, ties to even mantissa).
func TestFloat32ToFP16MatchesNearestEven(t *testing.T) {
	var vals []float64 // non-negative finite halves in increasing order
	for h := uint16(0); h < 0x7C00; h++ {
		vals = append(vals, float64(FP16ToFloat32(h)))
	}
	ref := func(f float32) uint16 {
		a := math.Abs(float64(f))
		sign := uint16(0)
		if math.Signbit(float64(f)) {
			sign = 0x8000
		}
		if a >= 65520 {
			return sign | 0x7C00
		}
		i := sort.SearchFloat64s(vals, a)
		if i == len(vals) {
			return sign | 0x7BFF
		}
		if vals[i] == a || i == 0 {
			return sign | uint16(i)
		}
		lo, hi := a-vals[i-1], vals[i]-a
		switch {
		case lo < hi:
			return sign | uint16(i-1)
		case hi < lo:
			return sign | uint16(i)
		case (i-1)%2 == 0:
			return sign | uint16(i-1)
		default:
			return sign | uint16(i)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	check := func(f float32) {
		if got, want := Float32ToFP16(f), ref(f); got != want {
			t.Fatalf("Float32ToFP16(%g [%#08x]) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		bits := r.Uint32()
		// concentrate on the half range: exponents 100..145
		bits = bits&0x807FFFFF | (100+r.Uint32N(46))<<23
		check(math.Float32frombits(bits))
	}
	for h := uint16(0); h < 0x7BFF; h++ { // every midpoint and its neighbours
		mid := float32((vals[h] + vals[h+1]) / 2)
		check(mid)
		check(math.Nextafter32(mid, 0))
		check(math.Nextafter32(mid, 1e9))
	}
}

func TestFloat32ToBF16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32
		want uint16
	}{
		{"one", 0x3F800000, 0x3F80},
		{"tie rounds to even (down)", 0x3F808000, 0x3F80},
		{"tie rounds to even (up)", 0x3F818000, 0x3F82},
		{"above tie rounds up", 0x3F808001, 0x3F81},
		{"below tie rounds down", 0x3F807FFF, 0x3F80},
		{"max float rounds to inf", 0x7F7FFFFF, 0x7F80},
		{"+inf", 0x7F800000, 0x7F80},
		{"-inf", 0xFF800000, 0xFF80},
		{"quiet NaN", 0x7FC00000, 0x7FC0},
		{"signalling NaN made quiet", 0x7F800001, 0x7FC0},
		{"negative NaN payload kept", 0xFFA10000, 0xFFE1},
		{"subnormal kept", 0x00010000, 0x0001},
		{"subnormal tie to even", 0x00018000, 0x0002},
		{"subnormal tie to zero", 0x00008000, 0x0000},
		{"negative zero", 0x80000000, 0x8000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Float32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
				t.Errorf("Float32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
	if got := BF16ToFloat32(0x3FC0); got != 1.5 {
		t.Errorf("BF16ToFloat32(0x3FC0) = %g, want 1.5", got)
	}
}

func TestNearestInt(t *testing.T) {
	tests := []struct {
		in   float32
		want int32
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {2.49, 2}, {-127.4, -127}, {100000.5, 100000}}
	for _, tc := range tests {
		if got := nearestInt(tc.in); got != tc.want {
			t.Errorf("nearestInt(%g) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
