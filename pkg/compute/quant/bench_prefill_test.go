package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// BenchmarkPrefillTile is one thread's share of a prefill matmul: 128
// weight rows of n elements times 512 activation rows (what a 256 KB
// weight tile of matMulRange meets); the figure is multiply-adds per
// second (weight elements × activation rows).
func BenchmarkPrefillTile(b *testing.B) {
	const rows, nX = 128, 512
	r := rand.New(rand.NewPCG(1, 4))
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q5_K, dtype.Q6_K, dtype.Q8_0} {
		for _, n := range []int{1024, 3072} {
			w, rb, xq, xs := benchOperands(b, r, typ, n, rows, nX)
			out := make([]float32, rows*nX)
			b.Run(fmt.Sprintf("%s/n%d", typ, n), func(b *testing.B) {
				b.SetBytes(int64(n * rows * nX))
				for b.Loop() {
					if err := VecDotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, out, rows); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPrefillChunk is BenchmarkPrefillTile for short prefills
// (chunks of 16 to 64 activation rows): where the interleaved kernels
// start paying for their unpacking.
func BenchmarkPrefillChunk(b *testing.B) {
	const rows, n = 128, 1024
	r := rand.New(rand.NewPCG(1, 5))
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0} {
		for _, nX := range []int{16, 32, 48, 64} {
			w, rb, xq, xs := benchOperands(b, r, typ, n, rows, nX)
			out := make([]float32, rows*nX)
			b.Run(fmt.Sprintf("%s/x%d", typ, nX), func(b *testing.B) {
				b.SetBytes(int64(n * rows * nX))
				for b.Loop() {
					if err := VecDotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, out, rows); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
