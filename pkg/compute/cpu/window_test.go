package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
)

// TestAttentionWindow checks the sliding-window attention against a naive
// float64 computation that masks key position k for the query at position
// p when p-k >= window (llama.cpp's standard SWA mask), over two sequences
// with scattered blocks and GQA.
func TestAttentionWindow(t *testing.T) {
	c := New(2)
	defer c.Close()
	const heads, kvHeads, d, bs = 4, 2, 16, 4
	kv, err := NewKVCache(1, 16, bs, kvHeads*d)
	if err != nil {
		t.Fatal(err)
	}
	copy(kv.k[0], randVec(len(kv.k[0]), 11))
	copy(kv.v[0], randVec(len(kv.v[0]), 12))
	spans := []compute.SeqSpan{{Row: 0, N: 5, Pos: 7, Blocks: []int32{3, 1, 0}}, {Row: 5, N: 1, Pos: 20, Blocks: []int32{2, 4, 5, 6, 7, 8}}}
	width := heads * d
	q := randVec(6*width, 13)
	a := &compute.Attn{Heads: heads, KVHeads: kvHeads, HeadDim: d, Scale: 0.25}
	for _, window := range []int{1, 3, 8, 100} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			qT, outT := &hostTensor{rows: 6, cols: width, data: q}, &hostTensor{rows: 6, cols: width, data: make([]float32, 6*width)}
			c.AttentionWindow(kv, 0, spans, a, window, qT, outT)
			for _, s := range spans {
				for tok := 0; tok < s.N; tok++ {
					for h := 0; h < heads; h++ {
						want := naiveWindow(kv, &s, a, window, tok, h, q)
						row := (s.Row+tok)*width + h*d
						for i, w := range want {
							if got := outT.data[row+i]; math.Abs(float64(got)-w) > 1e-5 {
								t.Fatalf("row %d head %d [%d]: %g, want %g", s.Row+tok, h, i, got, w)
							}
						}
					}
				}
			}
		})
	}
}

func naiveWindow(kv *KVCache, s *compute.SeqSpan, a *compute.Attn, window, tok, h int, q []float32) []float64 {
	d, p := a.HeadDim, s.Pos+tok
	kvh := h / (a.Heads / a.KVHeads)
	qv := q[(s.Row+tok)*a.Heads*d+h*d:][:d]
	var ws []float64
	var keys []int
	maxv := math.Inf(-1)
	for k := 0; k <= p; k++ {
		if p-k >= window {
			continue
		}
		kr := kv.k[0][kv.offset(s.Blocks, k, kvh*d):][:d]
		dot := 0.0
		for i := range qv {
			dot += float64(qv[i]) * float64(kr[i])
		}
		ws, keys = append(ws, dot*float64(a.Scale)), append(keys, k)
		maxv = math.Max(maxv, dot*float64(a.Scale))
	}
	sum := 0.0
	for i := range ws {
		ws[i] = math.Exp(ws[i] - maxv)
		sum += ws[i]
	}
	out := make([]float64, d)
	for j, k := range keys {
		vr := kv.v[0][kv.offset(s.Blocks, k, kvh*d):][:d]
		for i := range out {
			out[i] += ws[j] / sum * float64(vr[i])
		}
	}
	return out
}
