//go:build cgo && !purego

package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCKernelsMatchGo checks that the C kernels are bit-identical to the Go
// kernels on random rows of every quantized weight type.
func TestCKernelsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range weightTypes {
		if typ.BlockSize() == 1 {
			continue
		}
		for trial := 0; trial < 20; trial++ {
			n := typ.BlockSize() * 256 / typ.BlockSize() * (1 + trial%4)
			std := math.Pow(10, float64(trial%5)-3)
			w := mustQuantize(t, typ, gaussian(r, n, std))
			xq := mustActivations(t, typ, gaussian(r, n, 1))
			c, g := quantDot(typ, w, xq, n), goQuantDot(typ, w, xq, n)
			if math.Float32bits(c) != math.Float32bits(g) {
				t.Fatalf("%s n=%d: C kernel %.9g (%#08x) != Go kernel %.9g (%#08x)", typ, n, c, math.Float32bits(c), g, math.Float32bits(g))
			}
		}
	}
}
