package quant

import (
	"math/rand/v2"
	"testing"
)

const benchN = 4096

// BenchmarkVecDot reports weight bytes per second for one 4096-element row.
func BenchmarkVecDot(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, typ := range weightTypes {
		w := mustQuantize(b, typ, gaussian(r, benchN, 0.05))
		xq := mustActivations(b, typ, gaussian(r, benchN, 1))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			var s float32
			for b.Loop() {
				s += VecDot(typ, w, xq, benchN)
			}
			_ = s
		})
	}
}

// BenchmarkQuantizeActivations reports activation (float32) bytes per second.
func BenchmarkQuantizeActivations(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := gaussian(r, benchN, 1)
	for _, typ := range weightTypes {
		dst := make([]byte, ActivationBytes(typ, benchN))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * benchN)
			for b.Loop() {
				if err := QuantizeActivations(typ, x, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDequantize reports weight bytes per second.
func BenchmarkDequantize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 3))
	out := make([]float32, benchN)
	for _, typ := range weightTypes {
		w := mustQuantize(b, typ, gaussian(r, benchN, 0.05))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				if err := Dequantize(typ, w, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
