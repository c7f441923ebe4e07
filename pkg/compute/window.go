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
// softmax in F32 (sum in float64), weighted sum of the values; with the C
// vector kernels where the CPU has them, as Attention.
func (c *CPU) AttentionWindow(kvs KV, layer int, spans []SeqSpan, a *Attn, window int, qT, outT Tensor) {
	kv, q, out := hostKV(kvs), host(qT), host(outT)
	if window <= 0 {
		panic("compute: AttentionWindow with a window of no positions")
	}
	if c.vec != vecNone {
		c.attentionGroups(kv, layer, spans, a, window, q, out)
		return
	}
	c.attendRows(kv, layer, spans, a, window, q, out)
}
