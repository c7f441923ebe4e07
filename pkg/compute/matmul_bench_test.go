package compute

import (
	"fmt"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// BenchmarkMatMulDecode is a decode step's matrix products as a model runs
// them: one activation row times weights of 8192 rows of 2048 through the
// backend's worker pool, ten such weights in turn (94 to 178 MB, beyond
// the last-level cache, so the weights stream from memory as a model's
// do), on one thread and on two. The figure is weight bytes per second.
// Unlike two processes of quant's BenchmarkDecodeRows at once, whose
// sub-benchmarks need not overlap, the two threads here share the memory
// for the whole measurement.
func BenchmarkMatMulDecode(b *testing.B) {
	const n, m, mats = 2048, 8192, 10
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0} {
		ws := make([]*Weight, mats)
		for i := range ws {
			ws[i] = testWeight(b, typ, n, m)
		}
		x, out := randVec(n, 1), make([]float32, m)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads%d", typ, threads), func(b *testing.B) {
				c := NewCPU(threads)
				defer c.Close()
				b.SetBytes(int64(len(ws[0].Data)))
				i := 0
				for b.Loop() {
					if err := c.matMul(ws[i%mats], x, 1, out); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
