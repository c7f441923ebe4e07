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

// TestCRowsMatchGo checks the C row loop (float types included), with the
// dispatched (AVX2 where available) and the baseline kernels, against the
// pure-Go row loop.
func TestCRowsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, typ := range weightTypes {
		const n, rows = 512, 11 // one group of eight rows and three single ones
		var w []byte
		for i := 0; i < rows; i++ {
			w = append(w, mustQuantize(t, typ, gaussian(r, n, math.Pow(10, float64(i%5)-3)))...)
		}
		xq := mustActivations(t, typ, gaussian(r, n, 1))
		c, base, g := make([]float32, rows), make([]float32, rows), make([]float32, rows)
		dotRows(typ, w, len(w)/rows, rows, xq, n, c)
		dotRowsBase(typ, w, len(w)/rows, rows, xq, n, base)
		goDotRows(typ, w, len(w)/rows, rows, xq, n, g)
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(g[i]) || math.Float32bits(base[i]) != math.Float32bits(g[i]) {
				t.Fatalf("%s row %d: C %.9g, baseline C %.9g, Go %.9g", typ, i, c[i], base[i], g[i])
			}
		}
	}
}

// TestCRowsMultiMatchGo checks the multi-activation C kernels, dispatched
// and baseline, against the pure-Go loop.
func TestCRowsMultiMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, typ := range weightTypes {
		const n, rows, nX = 512, 5, 10 // one group of eight activation rows and one of two
		var w []byte
		for i := 0; i < rows; i++ {
			w = append(w, mustQuantize(t, typ, gaussian(r, n, math.Pow(10, float64(i%5)-3)))...)
		}
		var xq []byte
		for j := 0; j < nX; j++ {
			xq = append(xq, mustActivations(t, typ, gaussian(r, n, 1))...)
		}
		rb, xs := len(w)/rows, len(xq)/nX
		c, base, g := make([]float32, rows*nX), make([]float32, rows*nX), make([]float32, rows*nX)
		dotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, c, rows)
		dotRowsMultiBase(typ, w, rb, rows, xq, xs, nX, n, base, rows)
		goDotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, g, rows)
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(g[i]) || math.Float32bits(base[i]) != math.Float32bits(g[i]) {
				t.Fatalf("%s output %d: C %.9g, baseline C %.9g, Go %.9g", typ, i, c[i], base[i], g[i])
			}
		}
	}
}
