package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// TestVectorAttentionMatchesGo compares the C vector attention (each build
// this CPU runs: AVX2, AVX-512) with the Go kernel (the oracle) over
// several sequences, GQA groups and head widths that are not a multiple of
// the vector width, over an F32 and an F16 cache, without and with sliding
// windows.
func TestVectorAttentionMatchesGo(t *testing.T) {
	if cpuVecISA() == vecNone {
		t.Skip("this CPU runs no build of the vector attention")
	}
	for isa := vecAVX2; isa <= cpuVecISA(); isa++ {
		t.Run(fmt.Sprintf("isa%d", isa), func(t *testing.T) { vectorAttentionMatchesGo(t, isa) })
	}
}

func vectorAttentionMatchesGo(t *testing.T, isa vecISA) {
	c := New(2)
	defer c.Close()
	c.vec = isa
	for _, f16 := range []bool{false, true} {
		for _, tc := range []struct{ heads, kvHeads, d int }{{4, 2, 64}, {8, 8, 40}, {6, 1, 128}, {2, 2, 8}, {4, 4, 200}, {8, 2, 64}, {4, 4, 32}, {16, 2, 128}, {8, 1, 96}} {
			for _, window := range []int{0, 3, 17} {
				t.Run(fmt.Sprintf("h%d/kv%d/d%d/f16=%v/window%d", tc.heads, tc.kvHeads, tc.d, f16, window), func(t *testing.T) {
					kv, spans, a, q := attentionCase(t, tc.heads, tc.kvHeads, tc.d, f16)
					width := tc.heads * tc.d
					got, want := make([]float32, attnRows*width), make([]float32, attnRows*width)
					c.attentionGroups(kv, 0, spans, a, window, q, got)
					goAttention(kv, spans, a, window, q, want)
					for i := range got {
						if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("output %d: vector %.9g, Go %.9g", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestAttentionTileMatchesRows: the tile kernel (several query rows of a
// sequence against each cached row at once) gives the bits the one-row
// kernel gives each row alone, which is what lets chunked prefill and
// decode reproduce a prefill exactly: every head width and group the tile
// takes, over an F32 and an F16 cache, without and with a window.
func TestAttentionTileMatchesRows(t *testing.T) {
	if cpuVecISA() == vecNone {
		t.Skip("this CPU runs no build of the vector attention")
	}
	for isa := vecAVX2; isa <= cpuVecISA(); isa++ {
		c := New(2)
		c.vec = isa
		for _, f16 := range []bool{false, true} {
			for _, tc := range []struct{ heads, kvHeads, d int }{{4, 2, 64}, {8, 4, 128}, {8, 2, 96}, {4, 4, 32}, {2, 1, 256}} {
				for _, window := range []int{0, 17} {
					name := fmt.Sprintf("isa%d/h%d/kv%d/d%d/f16=%v/window%d", isa, tc.heads, tc.kvHeads, tc.d, f16, window)
					if attendTileRows(tc.heads/tc.kvHeads, tc.d) < 2 {
						t.Fatalf("%s: the tile does not take this shape", name)
					}
					kv, spans, a, q := attentionCase(t, tc.heads, tc.kvHeads, tc.d, f16)
					width := tc.heads * tc.d
					tiled, rows := make([]float32, attnRows*width), make([]float32, attnRows*width)
					c.attentionGroups(kv, 0, spans, a, window, q, tiled)
					for _, s := range spans {
						for i := range s.N {
							one := []compute.SeqSpan{{Row: s.Row + i, N: 1, Pos: s.Pos + i, Blocks: s.Blocks}}
							c.attentionGroups(kv, 0, one, a, window, q, rows)
						}
					}
					for i := range tiled {
						if math.Float32bits(tiled[i]) != math.Float32bits(rows[i]) {
							t.Fatalf("%s: output %d: tiled %.9g, row by row %.9g", name, i, tiled[i], rows[i])
						}
					}
				}
			}
		}
		c.Close()
	}
}

// TestF16CacheNearF32: attention over an F16 cache stays within F16
// rounding of the same attention over an F32 cache, and StoreKV rounds to
// F16 the same way on the vector and the Go path.
func TestF16CacheNearF32(t *testing.T) {
	const heads, kvHeads, d = 4, 2, 64
	kv32, spans, a, q := attentionCase(t, heads, kvHeads, d, false)
	kv16, _, _, _ := attentionCase(t, heads, kvHeads, d, true)
	got, want := make([]float32, attnRows*heads*d), make([]float32, attnRows*heads*d)
	goAttention(kv16, spans, a, 0, q, got)
	goAttention(kv32, spans, a, 0, q, want)
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 2e-3*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("output %d: F16 cache %.6g, F32 cache %.6g", i, got[i], want[i])
		}
	}
	for vec := vecNone; vec <= cpuVecISA(); vec++ {
		c := New(1)
		c.vec = vec
		src := randVec(37, 11)
		src[3] = 70000 // beyond F16's range: infinity
		dst := make([]uint16, len(src))
		c.toF16(dst, src)
		for i, x := range src {
			if dst[i] != quant.Float32ToFP16(x) {
				t.Fatalf("vector isa %d: value %g rounds to %#x, want %#x", vec, x, dst[i], quant.Float32ToFP16(x))
			}
		}
		c.Close()
	}
}

// attnRows is the number of query rows of attentionCase.
const attnRows = 15

// attentionCase is a one-layer cache of random keys and values (rounded to
// F16 when f16) with three sequences (5 new rows at position 7, 1 row at
// position 20, 9 rows at position 45: tiles of query rows full and
// partial, contexts over several blocks) and their queries.
func attentionCase(t *testing.T, heads, kvHeads, d int, f16 bool) (*KVCache, []compute.SeqSpan, *compute.Attn, []float32) {
	t.Helper()
	const bs, blocks = 4, 16
	kv, err := newKVCache(compute.KVShape{Layers: 1, NumBlocks: blocks, BlockSize: bs, KVDim: kvHeads * d, HeadDim: d, F16: f16})
	if err != nil {
		t.Fatal(err)
	}
	n := blocks * bs * kvHeads * d
	kvals, vvals := randVec(n, 3), randVec(n, 4)
	if f16 {
		for i := range kvals {
			kv.k16[0][i], kv.v16[0][i] = quant.Float32ToFP16(kvals[i]), quant.Float32ToFP16(vvals[i])
		}
	} else {
		copy(kv.k[0], kvals)
		copy(kv.v[0], vvals)
	}
	spans := []compute.SeqSpan{{Row: 0, N: 5, Pos: 7, Blocks: []int32{3, 1, 0}}, {Row: 5, N: 1, Pos: 20, Blocks: []int32{2, 4, 5, 6, 7, 8}},
		{Row: 6, N: 9, Pos: 45, Blocks: []int32{9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6}}}
	a := &compute.Attn{Heads: heads, KVHeads: kvHeads, HeadDim: d, Scale: 1 / float32(math.Sqrt(float64(d)))}
	return kv, spans, a, randVec(attnRows*heads*d, 5)
}

// goAttention is attention with the Go kernel, head by head (window > 0:
// each row's last window positions).
func goAttention(kv *KVCache, spans []compute.SeqSpan, a *compute.Attn, window int, q, out []float32) {
	scores, buf := make([]float32, 64), make([]float32, a.HeadDim)
	for si := range spans {
		s := &spans[si]
		for tok := 0; tok < s.N; tok++ {
			for h := 0; h < a.Heads; h++ {
				attendOne(kv, 0, s, a, window, tok, h, q, out, scores, buf)
			}
		}
	}
}

// TestVectorSwiGLUMatchesGo compares the C SwiGLU with the Go loop (the
// oracle), including a tail shorter than a vector and large magnitudes.
func TestVectorSwiGLUMatchesGo(t *testing.T) {
	if cpuVecISA() == vecNone {
		t.Skip("this CPU runs no build of the vector kernels")
	}
	for isa := vecAVX2; isa <= cpuVecISA(); isa++ {
		vectorSwiGLUMatchesGo(t, isa)
	}
}

func vectorSwiGLUMatchesGo(t *testing.T, isa vecISA) {
	for _, n := range []int{1, 15, 16, 37, 3072} {
		gate, up := randVec(n, 7), randVec(n, 8)
		for i := range gate {
			gate[i] *= 12 // reach the exp's flat regions
		}
		got := make([]float32, n)
		swigluVec(isa, gate, up, got)
		for i := range got {
			g := gate[i]
			want := g / (1 + float32(math.Exp(float64(-g)))) * up[i]
			if d := math.Abs(float64(got[i] - want)); d > 1e-6*math.Max(1, math.Abs(float64(want))) {
				t.Fatalf("isa %d, n=%d: out[%d] = %g, want %g", isa, n, i, got[i], want)
			}
		}
	}
}

// BenchmarkAttention: one layer's attention at Qwen3-0.6B's shape (16
// query heads, 8 KV heads of 128, F16 cache) with the vector kernels this
// CPU runs: a 512-token prompt (the tile kernel), and one decode step
// after 4 096 tokens (the one-row kernel), on one thread with the layer's
// 16 MB of keys and values in cache; decode4096mem is that step on two
// threads over 16 layers in turn, whose 256 MB come from memory as a
// model's do. The sequence's blocks are in the pool's order (each KV
// head's rows one run), except in decode4096mem/shuffled (reversed, as a
// long-lived cache's may be).
func BenchmarkAttention(b *testing.B) {
	const heads, kvHeads, d, bs = 16, 8, 128, 16
	for _, tc := range []struct {
		name                    string
		ctx, n, layers, threads int
		shuffled                bool
	}{{"prefill512", 512, 512, 1, 1, false}, {"decode4096", 4096, 1, 1, 1, false}, {"decode4096mem", 4096, 1, 16, 2, false},
		{"decode4096mem/shuffled", 4096, 1, 16, 2, true}} {
		b.Run(tc.name, func(b *testing.B) {
			c := New(tc.threads)
			defer c.Close()
			if c.vec == vecNone {
				b.Skip("this CPU runs no build of the vector attention")
			}
			kv, err := newKVCache(compute.KVShape{Layers: tc.layers, NumBlocks: tc.ctx / bs, BlockSize: bs, KVDim: kvHeads * d, HeadDim: d, F16: true})
			if err != nil {
				b.Fatal(err)
			}
			for l := range tc.layers {
				for i, v := range randVec(len(kv.k16[l]), uint64(3+2*l)) {
					kv.k16[l][i] = quant.Float32ToFP16(v)
				}
				for i, v := range randVec(len(kv.v16[l]), uint64(4+2*l)) {
					kv.v16[l][i] = quant.Float32ToFP16(v)
				}
			}
			blocks := make([]int32, tc.ctx/bs)
			for i := range blocks {
				blocks[i] = int32(i) // in order, as the block pool hands them out
				if tc.shuffled {
					blocks[i] = int32(len(blocks) - 1 - i) // out of order, as a long-lived cache's may be
				}
			}
			spans := []compute.SeqSpan{{Row: 0, N: tc.n, Pos: tc.ctx - tc.n, Blocks: blocks}}
			a := &compute.Attn{Heads: heads, KVHeads: kvHeads, HeadDim: d, Scale: 1 / float32(math.Sqrt(d))}
			q, out := randVec(tc.n*heads*d, 5), make([]float32, tc.n*heads*d)
			b.ResetTimer()
			for i := range b.N {
				c.attentionGroups(kv, i%tc.layers, spans, a, 0, q, out)
			}
			b.SetBytes(int64(tc.ctx * kvHeads * d * 2 * 2))
		})
	}
}
