package cpu

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// geluTable is gelu of every F16 value, rounded to F16: ggml-cpu computes
// GELU through this table (GGML_GELU_FP16), so the CPU backend does too, to
// give llama.cpp's results bit for bit.
var geluTable = func() []uint16 {
	t := make([]uint16, 1<<16)
	for i := range t {
		x := quant.FP16ToFloat32(uint16(i))
		t[i] = quant.Float32ToFP16(geluF32(x))
	}
	return t
}()

// geluF32 is ggml's tanh-approximated GELU in float32.
func geluF32(x float32) float32 {
	const coefA, sqrt2OverPi = float32(0.044715), float32(0.79788456080286535587989211986876)
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2OverPi*x*(1+coefA*x*x)))))
}

// gelu is ggml-cpu's GELU of one value: the F16 table inside ±10.
func gelu(x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return quant.FP16ToFloat32(geluTable[quant.Float32ToFP16(x)])
}

// GeGLU implements compute.Backend.
func (c *Backend) GeGLU(gateT, upT, outT compute.Tensor) {
	g, u, o := host(gateT), host(upT), host(outT)
	if len(g) != len(u) || len(g) != len(o) {
		panic(fmt.Sprintf("cpu: GeGLU of %d, %d and %d values", len(g), len(u), len(o)))
	}
	c.pool.parallelFor(len(o), minParallelWork, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o[i] = gelu(g[i]) * u[i]
		}
	})
}

// Softcap implements compute.Backend as ggml does: scale by 1/c, tanh,
// scale by c.
func (c *Backend) Softcap(t compute.Tensor, capv float32) {
	x, inv := host(t), 1/capv
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v*inv))) * capv
	}
}
