package cpu

import

// AttentionWindow implements compute.Backend: for every (query row,
// head) pair, scores against the cached positions in the row's window,
// softmax in F32 (sum in float64), weighted sum of the values; with the C
// vector kernels where the CPU has them, as Attention.
"github.com/helexa/helexa/pkg/compute"

func (c *Backend) AttentionWindow(kvs compute.KV, layer int, spans []compute.SeqSpan, a *compute.Attn, window int, qT, outT compute.Tensor) {
	kv, q, out := hostKV(kvs), host(qT), host(outT)
	if window <= 0 {
		panic("cpu: AttentionWindow with a window of no positions")
	}
	if c.vec != vecNone {
		c.attentionGroups(kv, layer, spans, a, window, q, out)
		return
	}
	c.attendRows(kv, layer, spans, a, window, q, out)
}
