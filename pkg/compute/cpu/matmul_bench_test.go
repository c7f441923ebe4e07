package cpu

import (
	"fmt"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// BenchmarkMatMulDecode is a decode step's matrix products as a model runs
// them: one activation row times weights of 8192 rows of 2048 through the
// backend's worker pool, ten such weights in turn (94 to 178 MB, beyond
// the last-level cache, so the weights stream from memory as a model's
// do), on one thread and on two. The figure is weight bytes per second.
// Unlike two processes of quant's BenchmarkDecodeRows at once, whose
// sub-benchmarks need not overlap, the two threads here share the memory
// for the whole measurement. The packed variants time the layout Prepare
// gives a mapped model's weights at the AVX-512 VNNI level.
func BenchmarkMatMulDecode(b *testing.B) {
	const n, m, mats = 2048, 8192, 10
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0} {
		ws := make([]*compute.Weight, mats)
		for i := range ws {
			ws[i] = testWeight(b, typ, n, m)
		}
		x, out := randVec(n, 1), make([]float32, m)
		for _, v := range []struct {
			threads int
			packed  bool
		}{{1, false}, {2, false}, {1, true}, {2, true}} {
			if v.packed && !quant.CanPack(typ, m, n) {
				continue
			}
			threads := v.threads
			name := fmt.Sprintf("%s/threads%d", typ, threads)
			if v.packed {
				name = fmt.Sprintf("%s/packed/threads%d", typ, threads)
			}
			b.Run(name, func(b *testing.B) {
				c := New(threads)
				defer c.Close()
				ws := ws
				if v.packed {
					ws = packedCopies(b, c, ws)
				}
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

// packedCopies packs a copy of each weight as Prepare packs a mapped
// model's. The copies pose as mapped: Prepare gives back the pages of
// their own bytes, which nothing reads again.
func packedCopies(b *testing.B, c *Backend, ws []*compute.Weight) []*compute.Weight {
	b.Helper()
	out := make([]*compute.Weight, len(ws))
	for i, w := range ws {
		cp, err := compute.NewWeight(w.Name, w.Type, []int{w.Cols(), w.Rows()}, append([]byte(nil), w.Data...))
		if err != nil {
			b.Fatal(err)
		}
		cp.Mapped = true
		if err := c.Prepare(cp); err != nil {
			b.Fatal(err)
		}
		out[i] = cp
	}
	return out
}

// BenchmarkDecodeProducts is one Llama-3.2-1B decode token's matrix
// products in the order the model runs them, through the backend's pool on
// two threads: per layer q·k·v in one pass, o, gate·up in one pass and
// down, for 16 layers, then the 128 256-row output head; the packed layout
// where this CPU packs. Q4_K_M is the file's mix (attn_v and ffn_down in
// Q6_K every other layer, the head in Q6_K: 800 MB a token), Q8_0 all
// Q8_0 (1.3 GB). Every product streams from memory as in the model; the
// figure is weight bytes per second and tokens per second of products
// alone (no norms, attention or sampling between them). The products read
// at the rates they read in the model, which is what makes this the place
// to time the pool and the kernels' calls.
func BenchmarkDecodeProducts(b *testing.B) {
	for _, file := range []string{"Q4_K_M", "Q8_0"} {
		b.Run(file, func(b *testing.B) { decodeProducts(b, file == "Q8_0") })
	}
}

func decodeProducts(b *testing.B, q8 bool) {
	c := New(2)
	defer c.Close()
	mk := func(typ dtype.Type, n, m int) *compute.Weight {
		if q8 {
			typ = dtype.Q8_0
		}
		return packedCopies(b, c, []*compute.Weight{testWeight(b, typ, n, m)})[0]
	}
	var steps [][]*compute.Weight
	var bytes int64
	for i := range 16 {
		q6 := dtype.Q4_K
		if i%2 == 0 {
			q6 = dtype.Q6_K
		}
		steps = append(steps, []*compute.Weight{mk(dtype.Q4_K, 2048, 2048), mk(dtype.Q4_K, 2048, 512), mk(q6, 2048, 512)},
			[]*compute.Weight{mk(dtype.Q4_K, 2048, 2048)}, []*compute.Weight{mk(dtype.Q4_K, 2048, 8192), mk(dtype.Q4_K, 2048, 8192)},
			[]*compute.Weight{mk(q6, 8192, 2048)})
	}
	steps = append(steps, []*compute.Weight{mk(dtype.Q6_K, 2048, 128256)})
	outs := make([][]compute.Tensor, len(steps))
	xs := make([]compute.Tensor, len(steps))
	for i, ws := range steps {
		xs[i] = &hostTensor{randVec(ws[0].Cols(), uint64(i)), 1, ws[0].Cols()}
		for _, w := range ws {
			outs[i] = append(outs[i], &hostTensor{make([]float32, w.Rows()), 1, w.Rows()})
			bytes += int64(len(w.Data))
		}
	}
	b.SetBytes(bytes)
	for b.Loop() {
		for i, ws := range steps {
			if err := c.MatMuls(ws, xs[i], outs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
