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
	r := rand.New(rand.NewPCG(1, 4))
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q5_K, dtype.Q6_K, dtype.Q8_0} {
		for _, n := range []int{1024, 3072} {
			benchRowsMulti(b, r, fmt.Sprintf("%s/n%d", typ, n), typ, n, 128, 512)
		}
	}
}

// BenchmarkPrefillChunk is BenchmarkPrefillTile for short prefills
// (chunks of 16 to 64 activation rows): where the interleaved kernels
// start paying for their unpacking.
func BenchmarkPrefillChunk(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 5))
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0} {
		for _, nX := range []int{4, 8, 16, 32, 48, 64} {
			benchRowsMulti(b, r, fmt.Sprintf("%s/x%d", typ, nX), typ, 1024, 128, nX)
		}
	}
}

// benchRowsMulti runs sub-benchmark name: VecDotRowsMulti of rows random
// weight rows of n elements of type typ times nX activation rows, in
// multiply-adds per second.
func benchRowsMulti(b *testing.B, r *rand.Rand, name string, typ dtype.Type, n, rows, nX int) {
	w, rb, xq, xs := benchOperands(b, r, typ, n, rows, nX)
	out := make([]float32, rows*nX)
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(n * rows * nX))
		for b.Loop() {
			if err := VecDotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, out, rows); err != nil {
				b.Fatal(err)
			}
		}
	})
}
