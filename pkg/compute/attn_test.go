package compute

import (
	"fmt"
	"math"
	"testing"
)

// TestVectorAttentionMatchesGo compares the C vector attention with the Go
// kernel (the oracle) over several sequences, GQA groups and head widths
// that are not a multiple of the vector width.
func TestVectorAttentionMatchesGo(t *testing.T) {
	if !vectorAttention() {
		t.Skip("the vector attention does not run at this kernel level / on this CPU")
	}
	c := NewCPU(2)
	defer c.Close()
	for _, tc := range []struct{ heads, kvHeads, d int }{{4, 2, 64}, {8, 8, 40}, {6, 1, 128}, {2, 2, 8}, {4, 4, 200}} {
		t.Run(fmt.Sprintf("h%d/kv%d/d%d", tc.heads, tc.kvHeads, tc.d), func(t *testing.T) {
			const bs, blocks = 4, 16
			kv, err := NewKVCache(1, blocks, bs, tc.kvHeads*tc.d)
			if err != nil {
				t.Fatal(err)
			}
			copy(kv.k[0], randVec(len(kv.k[0]), 3))
			copy(kv.v[0], randVec(len(kv.v[0]), 4))
			// two sequences: 5 new rows at position 7, 1 row at position 20
			spans := []SeqSpan{{Row: 0, N: 5, Pos: 7, Blocks: []int32{3, 1, 0}}, {Row: 5, N: 1, Pos: 20, Blocks: []int32{2, 4, 5, 6, 7, 8}}}
			width := tc.heads * tc.d
			q := randVec(6*width, 5)
			a := &Attn{Heads: tc.heads, KVHeads: tc.kvHeads, HeadDim: tc.d, Scale: 1 / float32(math.Sqrt(float64(tc.d)))}
			got, want := make([]float32, 6*width), make([]float32, 6*width)
			c.attentionGroups(kv, 0, spans, a, q, got)
			scores := make([]float32, 32)
			for si := range spans {
				s := &spans[si]
				for tok := 0; tok < s.N; tok++ {
					for h := 0; h < tc.heads; h++ {
						attendOne(kv, 0, s, a, 0, tok, h, q, want, scores)
					}
				}
			}
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("output %d: vector %.9g, Go %.9g", i, got[i], want[i])
				}
			}
		})
	}
}

// TestVectorSwiGLUMatchesGo compares the C SwiGLU with the Go loop (the
// oracle), including a tail shorter than a vector and large magnitudes.
func TestVectorSwiGLUMatchesGo(t *testing.T) {
	if !vectorAttention() {
		t.Skip("the vector kernels do not run at this kernel level / on this CPU")
	}
	for _, n := range []int{1, 15, 16, 37, 3072} {
		gate, up := randVec(n, 7), randVec(n, 8)
		for i := range gate {
			gate[i] *= 12 // reach the exp's flat regions
		}
		got := make([]float32, n)
		swigluVec(gate, up, got)
		for i := range got {
			g := gate[i]
			want := g / (1 + float32(math.Exp(float64(-g)))) * up[i]
			if d := math.Abs(float64(got[i] - want)); d > 1e-6*math.Max(1, math.Abs(float64(want))) {
				t.Fatalf("n=%d: out[%d] = %g, want %g", n, i, got[i], want)
			}
		}
	}
}
