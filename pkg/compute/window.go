package compute

// WindowAttentionBackend is a backend with sliding-window attention (Gemma
// 3's local layers): an optional extension of Backend.
type WindowAttentionBackend interface {
	// AttentionWindow is Attention where the query at position p sees only
	// the cached positions p-window+1 … p (llama.cpp's standard SWA mask:
	// key position k is masked when p-k >= window). window > 0.
	AttentionWindow(kv KV, layer int, spans []SeqSpan, a *Attn, window int, q, out Tensor)
}

// AttentionWindow implements WindowAttentionBackend: for every (query row,
// head) pair, scores against the cached positions in the row's window,
// softmax in F32 (sum in float64), weighted sum of the values.
func (c *CPU) AttentionWindow(kvs KV, layer int, spans []SeqSpan, a *Attn, window int, qT, outT Tensor) {
	kv, q, out := hostKV(kvs), host(qT), host(outT)
	if window <= 0 {
		panic("compute: AttentionWindow with a window of no positions")
	}
	starts := make([]int, len(spans)+1)
	for i, s := range spans {
		starts[i+1] = starts[i] + s.N*a.Heads
	}
	c.pool.parallelFor(starts[len(spans)], grain(2*window*a.HeadDim), func(lo, hi int) {
		scores := make([]float32, window)
		si := 0
		for idx := lo; idx < hi; idx++ {
			for idx >= starts[si+1] {
				si++
			}
			s := &spans[si]
			local := idx - starts[si]
			attendWindow(kv, layer, s, a, window, local/a.Heads, local%a.Heads, q, out, scores)
		}
	})
}

// attendWindow computes one head of one query row over its window.
func attendWindow(kv *KVCache, layer int, s *SeqSpan, a *Attn, window, tok, h int, q, out, scores []float32) {
	d := a.HeadDim
	width := a.Heads * d
	row := s.Row + tok
	qv := q[row*width+h*d : row*width+(h+1)*d]
	ov := out[row*width+h*d : row*width+(h+1)*d]
	kvh := h / (a.Heads / a.KVHeads)
	kl, vl := kv.k[layer], kv.v[layer]
	n := s.Pos + tok + 1
	first := max(0, n-window)
	sc := scores[:n-first]
	for j := first; j < n; j++ {
		off := kv.offset(s.Blocks, j) + kvh*d
		kr := kl[off : off+d]
		var dot float32
		for i, x := range qv {
			dot += x * kr[i]
		}
		sc[j-first] = dot
	}
	softmax(sc, sc, a.Scale)
	for i := range ov {
		ov[i] = 0
	}
	for j, w := range sc {
		off := kv.offset(s.Blocks, first+j) + kvh*d
		vr := vl[off : off+d]
		for i, x := range vr {
			ov[i] += w * x
		}
	}
}
