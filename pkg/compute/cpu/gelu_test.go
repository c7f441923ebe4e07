package cpu

import (
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute/quant"
)

// TestGeGLU checks ggml's GELU: the F16 table inside ±10 (within F16
// rounding of the exact tanh GELU), 0 below -10 and the identity above 10.
func TestGeGLU(t *testing.T) {
	c := New(1)
	defer c.Close()
	gate := []float32{-12, -10, -3, -0.5, 0, 1e-3, 0.7, 2.5, 9.99, 10, 15}
	up := []float32{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	out := make([]float32, len(gate))
	c.GeGLU(&hostTensor{rows: 1, cols: len(gate), data: gate}, &hostTensor{rows: 1, cols: len(up), data: up},
		&hostTensor{rows: 1, cols: len(out), data: out})
	for i, g := range gate {
		x := float64(g)
		exact := 0.5 * x * (1 + math.Tanh(0.7978845608028654*x*(1+0.044715*x*x)))
		switch {
		case g <= -10:
			exact = 0
		case g >= 10:
			exact = x
		}
		if d := math.Abs(float64(out[i])/2 - exact); d > 1e-3*math.Max(1, math.Abs(exact)) {
			t.Errorf("gelu(%g) = %g, want %g", g, out[i]/2, exact)
		}
		// inside ±10 the value comes from the F16 table: it is an F16 value
		if h := out[i] / 2; g > -10 && g < 10 && quant.FP16ToFloat32(quant.Float32ToFP16(h)) != h {
			t.Errorf("gelu(%g) = %g is not an F16 value (not ggml's table)", g, h)
		}
	}
}
