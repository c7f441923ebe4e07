package arch

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/compute"
)

// Batch is one forward pass: the rows of several sequences, each span a
// contiguous run of rows (compute.SeqSpan) whose KV is written to and read
// from the cache through its block table.
type Batch struct {
	Tokens []int32 // one per row
	Pos    []int32 // position of each row
	Spans  []compute.SeqSpan
	// LogitRows are the rows whose logits the pass returns, in this order.
	LogitRows []int
}

// RoutingHook observes MoE routing: for batch row row in layer layer, the
// chosen experts (most probable first) and the router probabilities over
// all experts (softmax before renormalisation). The slices are reused
// after the call returns.
type RoutingHook func(row, layer int, experts []int32, probs []float32)

// Scratch holds a forward pass's activation buffers so that successive
// passes reuse them. The zero value is ready to use.
type Scratch struct {
	x, xb, q, k, v, att, proj, logits []float32
	ffn                               ffnScratch
	moe                               moeScratch
}

// ffnScratch holds the buffers of one SwiGLU FFN.
type ffnScratch struct{ gate, up, hid []float32 }

func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// Forward runs the batch through the model, writing every row's keys and
// values into kv, and returns the logits of b.LogitRows (len(LogitRows) ×
// NVocab, valid until the next call with the same scratch).
func (m *Model) Forward(be compute.Backend, kv *compute.KVCache, b *Batch, s *Scratch, hook RoutingHook) ([]float32, error) {
	hp := &m.HP
	rows := len(b.Tokens)
	if len(b.Pos) != rows {
		return nil, fmt.Errorf("forward: %d tokens but %d positions", rows, len(b.Pos))
	}
	x := grow(&s.x, rows*hp.NEmbd)
	if err := be.Embed(m.tokEmbd, b.Tokens, x); err != nil {
		return nil, err
	}
	for il := range m.layers {
		if err := m.attention(be, kv, il, b, s); err != nil {
			return nil, fmt.Errorf("layer %d attention: %w", il, err)
		}
		if err := m.ffn(be, il, rows, s, hook); err != nil {
			return nil, fmt.Errorf("layer %d ffn: %w", il, err)
		}
	}
	return m.logits(be, b.LogitRows, s)
}

func (m *Model) attention(be compute.Backend, kv *compute.KVCache, il int, b *Batch, s *Scratch) error {
	hp, l := &m.HP, &m.layers[il]
	rows := len(b.Tokens)
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	xb := grow(&s.xb, rows*hp.NEmbd)
	q, k, v := grow(&s.q, rows*qDim), grow(&s.k, rows*kvDim), grow(&s.v, rows*kvDim)
	be.RMSNorm(s.x, rows, l.attnNorm, hp.Eps, xb)
	for _, mm := range []struct {
		w    *compute.Weight
		bias []float32
		out  []float32
	}{{l.wq, l.bq, q}, {l.wk, l.bk, k}, {l.wv, l.bv, v}} {
		if err := be.MatMul(mm.w, xb, rows, mm.out); err != nil {
			return err
		}
		if mm.bias != nil {
			addRows(be, mm.out, mm.bias, rows)
		}
	}
	if l.qNorm != nil {
		be.RMSNorm(q, rows*hp.NHead, l.qNorm, hp.Eps, q)
		be.RMSNorm(k, rows*hp.NHeadKV, l.kNorm, hp.Eps, k)
	}
	be.RoPE(q, b.Pos, hp.NHead, hp.HeadDim, &m.rope)
	be.RoPE(k, b.Pos, hp.NHeadKV, hp.HeadDim, &m.rope)
	be.StoreKV(kv, il, b.Spans, k, v)
	att := grow(&s.att, rows*qDim)
	a := compute.Attn{Heads: hp.NHead, KVHeads: hp.NHeadKV, HeadDim: hp.HeadDim,
		Scale: 1 / float32(math.Sqrt(float64(hp.HeadDim)))}
	be.Attention(kv, il, b.Spans, &a, q, att)
	proj := grow(&s.proj, rows*hp.NEmbd)
	if err := be.MatMul(l.wo, att, rows, proj); err != nil {
		return err
	}
	be.Add(s.x, proj)
	return nil
}

// addRows adds bias to each of the rows of x.
func addRows(be compute.Backend, x, bias []float32, rows int) {
	n := len(bias)
	for r := 0; r < rows; r++ {
		be.Add(x[r*n:(r+1)*n], bias)
	}
}

func (m *Model) ffn(be compute.Backend, il, rows int, s *Scratch, hook RoutingHook) error {
	hp, l := &m.HP, &m.layers[il]
	xb := grow(&s.xb, rows*hp.NEmbd)
	be.RMSNorm(s.x, rows, l.ffnNorm, hp.Eps, xb)
	proj := grow(&s.proj, rows*hp.NEmbd)
	if l.router != nil {
		if err := m.moe(be, il, rows, xb, proj, s, hook); err != nil {
			return err
		}
	} else if err := denseFFN(be, l.gate, l.up, l.down, xb, rows, proj, &s.ffn); err != nil {
		return err
	}
	be.Add(s.x, proj)
	return nil
}

// denseFFN computes down(silu(gate·x) * up·x) for rows rows of x.
func denseFFN(be compute.Backend, gate, up, down *compute.Weight, x []float32, rows int, out []float32, s *ffnScratch) error {
	nff := gate.Rows()
	g, u, h := grow(&s.gate, rows*nff), grow(&s.up, rows*nff), grow(&s.hid, rows*nff)
	if err := be.MatMul(gate, x, rows, g); err != nil {
		return err
	}
	if err := be.MatMul(up, x, rows, u); err != nil {
		return err
	}
	be.SwiGLU(g, u, h)
	return be.MatMul(down, h, rows, out)
}

func (m *Model) logits(be compute.Backend, rows []int, s *Scratch) ([]float32, error) {
	hp := &m.HP
	n := len(rows)
	if n == 0 {
		return nil, nil
	}
	sel := grow(&s.xb, n*hp.NEmbd)
	for i, r := range rows {
		copy(sel[i*hp.NEmbd:(i+1)*hp.NEmbd], s.x[r*hp.NEmbd:(r+1)*hp.NEmbd])
	}
	be.RMSNorm(sel, n, m.outputNorm, hp.Eps, sel)
	out := grow(&s.logits, n*hp.NVocab)
	if err := be.MatMul(m.output, sel, n, out); err != nil {
		return nil, err
	}
	return out, nil
}
