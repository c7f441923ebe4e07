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
	// HiddenRows are the rows whose final hidden state (after the output
	// norm, the input of the output head) the pass returns: embeddings.
	HiddenRows []int
}

// Output is what a pass returns: scratch tensors valid until the next pass
// with the same scratch (nil when no rows were asked for).
type Output struct {
	Logits compute.Tensor // len(LogitRows) × NVocab
	Hidden compute.Tensor // len(HiddenRows) × NEmbd
}

// RoutingHook observes MoE routing: for batch row row in layer layer, the
// chosen experts (most probable first) and the router probabilities over
// all experts (softmax before renormalisation). The slices are reused
// after the call returns.
type RoutingHook func(row, layer int, experts []int32, probs []float32)

// Scratch holds a forward pass's activation tensors so that successive
// passes reuse them; they belong to the backend that made them (Free
// returns them). The zero value is ready to use.
type Scratch struct {
	bufs map[string]*scratchBuf
	moe  moeScratch
	rows []int32 // row indexes of a gather, reused
}

// scratchBuf is one backing tensor and the last view handed out.
type scratchBuf struct {
	t, view compute.Tensor
}

// get returns a rows × cols tensor for the named buffer, growing its
// backing tensor when needed.
func (s *Scratch) get(be compute.Backend, name string, rows, cols int) (compute.Tensor, error) {
	if s.bufs == nil {
		s.bufs = map[string]*scratchBuf{}
	}
	b := s.bufs[name]
	if b != nil && b.view.Rows() == rows && b.view.Cols() == cols {
		return b.view, nil
	}
	if b == nil || b.t.Rows()*b.t.Cols() < rows*cols {
		if b != nil {
			be.Free(b.t)
		}
		t, err := be.NewTensor(rows, cols)
		if err != nil {
			return nil, fmt.Errorf("scratch %s (%d × %d): %w", name, rows, cols, err)
		}
		b = &scratchBuf{t: t}
		s.bufs[name] = b
	}
	b.view = be.View(b.t, rows, cols)
	return b.view, nil
}

// Free returns every scratch tensor to the backend.
func (s *Scratch) Free(be compute.Backend) {
	for _, b := range s.bufs {
		be.Free(b.t)
	}
	s.bufs = nil
}

// Prepare hands every weight and parameter vector of the model to the
// backend once, before the first pass (a GPU backend uploads them).
func (m *Model) Prepare(be compute.Backend) error {
	var ws []*compute.Weight
	var vs []*compute.Vector
	ws = append(ws, m.tokEmbd, m.output)
	vs = append(vs, m.outputNorm)
	for i := range m.layers {
		l := &m.layers[i]
		ws = append(ws, l.wq, l.wk, l.wv, l.wo, l.gate, l.up, l.down, l.router, l.gateExps, l.upExps, l.downExps)
		ws = append(append(append(ws, l.gateE...), l.upE...), l.downE...)
		vs = append(vs, l.attnNorm, l.ffnNorm, l.bq, l.bk, l.bv, l.qNorm, l.kNorm)
	}
	seen := map[*compute.Weight]bool{}
	for _, w := range ws {
		if w == nil || seen[w] {
			continue // absent, or tied (the output head is the embedding)
		}
		seen[w] = true
		if err := be.Prepare(w); err != nil {
			return fmt.Errorf("preparing %s: %w", w.Name, err)
		}
	}
	for _, v := range vs {
		if v == nil {
			continue
		}
		if err := be.PrepareVector(v); err != nil {
			return fmt.Errorf("preparing %s: %w", v.Name, err)
		}
	}
	return nil
}

// pass is one forward pass's state.
type pass struct {
	m    *Model
	be   compute.Backend
	kv   compute.KV
	b    *Batch
	s    *Scratch
	rows int
	x    compute.Tensor // the residual stream, rows × NEmbd
}

// Forward runs the batch through the model, writing every row's keys and
// values into kv, and returns the logits of b.LogitRows and the final
// hidden states of b.HiddenRows.
func (m *Model) Forward(be compute.Backend, kv compute.KV, b *Batch, s *Scratch, hook RoutingHook) (*Output, error) {
	hp := &m.HP
	rows := len(b.Tokens)
	if len(b.Pos) != rows {
		return nil, fmt.Errorf("forward: %d tokens but %d positions", rows, len(b.Pos))
	}
	x, err := s.get(be, "x", rows, hp.NEmbd)
	if err != nil {
		return nil, err
	}
	if err := be.Embed(m.tokEmbd, b.Tokens, x); err != nil {
		return nil, err
	}
	p := &pass{m: m, be: be, kv: kv, b: b, s: s, rows: rows, x: x}
	for il := range m.layers {
		if err := p.attention(il); err != nil {
			return nil, fmt.Errorf("layer %d attention: %w", il, err)
		}
		if err := p.ffn(il, hook); err != nil {
			return nil, fmt.Errorf("layer %d ffn: %w", il, err)
		}
	}
	out := &Output{}
	if out.Hidden, err = p.normed(b.HiddenRows, "hidden"); err != nil {
		return nil, err
	}
	if out.Logits, err = p.logits(b.LogitRows); err != nil {
		return nil, err
	}
	return out, nil
}

// buf names a scratch tensor of a pass and its width.
type buf struct {
	name string
	cols int
}

// tensors fills ts with the named scratch tensors, p.rows rows each,
// without allocating (the forward pass runs once per decode step).
func (p *pass) tensors(ts []compute.Tensor, bufs ...buf) error {
	for i, b := range bufs {
		t, err := p.s.get(p.be, b.name, p.rows, b.cols)
		if err != nil {
			return err
		}
		ts[i] = t
	}
	return nil
}

func (p *pass) attention(il int) error {
	m, be, hp, l := p.m, p.be, &p.m.HP, &p.m.layers[il]
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	var ts [6]compute.Tensor
	if err := p.tensors(ts[:], buf{"xb", hp.NEmbd}, buf{"q", qDim}, buf{"k", kvDim}, buf{"v", kvDim},
		buf{"att", qDim}, buf{"proj", hp.NEmbd}); err != nil {
		return err
	}
	xb, q, k, v, att, proj := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]
	be.RMSNorm(p.x, l.attnNorm, hp.Eps, xb)
	for _, mm := range []struct {
		w    *compute.Weight
		bias *compute.Vector
		out  compute.Tensor
	}{{l.wq, l.bq, q}, {l.wk, l.bk, k}, {l.wv, l.bv, v}} {
		if err := be.MatMul(mm.w, xb, mm.out); err != nil {
			return err
		}
		if mm.bias != nil {
			be.AddRow(mm.out, mm.bias)
		}
	}
	if l.qNorm != nil {
		qh := be.View(q, p.rows*hp.NHead, hp.HeadDim)
		kh := be.View(k, p.rows*hp.NHeadKV, hp.HeadDim)
		be.RMSNorm(qh, l.qNorm, hp.Eps, qh)
		be.RMSNorm(kh, l.kNorm, hp.Eps, kh)
	}
	be.RoPE(q, p.b.Pos, hp.NHead, hp.HeadDim, &m.rope)
	be.RoPE(k, p.b.Pos, hp.NHeadKV, hp.HeadDim, &m.rope)
	be.StoreKV(p.kv, il, p.b.Spans, k, v)
	a := compute.Attn{Heads: hp.NHead, KVHeads: hp.NHeadKV, HeadDim: hp.HeadDim,
		Scale: 1 / float32(math.Sqrt(float64(hp.HeadDim)))}
	be.Attention(p.kv, il, p.b.Spans, &a, q, att)
	if err := be.MatMul(l.wo, att, proj); err != nil {
		return err
	}
	if err := be.AllReduce(proj); err != nil {
		return err
	}
	be.Add(p.x, proj)
	return nil
}

func (p *pass) ffn(il int, hook RoutingHook) error {
	be, hp, l := p.be, &p.m.HP, &p.m.layers[il]
	var ts [2]compute.Tensor
	if err := p.tensors(ts[:], buf{"xb", hp.NEmbd}, buf{"proj", hp.NEmbd}); err != nil {
		return err
	}
	xb, proj := ts[0], ts[1]
	be.RMSNorm(p.x, l.ffnNorm, hp.Eps, xb)
	var err error
	if l.router != nil {
		err = p.moe(il, xb, proj, hook)
	} else {
		err = denseFFN(be, p.s, l.gate, l.up, l.down, xb, proj)
	}
	if err != nil {
		return err
	}
	if err := be.AllReduce(proj); err != nil {
		return err
	}
	be.Add(p.x, proj)
	return nil
}

// denseFFN computes down(silu(gate·x) * up·x) for every row of x.
func denseFFN(be compute.Backend, s *Scratch, gate, up, down *compute.Weight, x, out compute.Tensor) error {
	rows, nff := x.Rows(), gate.Rows()
	var ts [3]compute.Tensor
	for i, n := range []string{"ffn.gate", "ffn.up", "ffn.hid"} {
		t, err := s.get(be, n, rows, nff)
		if err != nil {
			return err
		}
		ts[i] = t
	}
	g, u, h := ts[0], ts[1], ts[2]
	if err := be.MatMul(gate, x, g); err != nil {
		return err
	}
	if err := be.MatMul(up, x, u); err != nil {
		return err
	}
	be.SwiGLU(g, u, h)
	return be.MatMul(down, h, out)
}

// normed gathers rows of the residual stream into the named scratch tensor
// and applies the output norm (nil when rows is empty).
func (p *pass) normed(rows []int, name string) (compute.Tensor, error) {
	be, hp := p.be, &p.m.HP
	if len(rows) == 0 {
		return nil, nil
	}
	sel, err := p.s.get(be, name, len(rows), hp.NEmbd)
	if err != nil {
		return nil, err
	}
	idx := growInts(&p.s.rows, len(rows))
	for i, r := range rows {
		idx[i] = int32(r)
	}
	be.GatherRows(p.x, idx, sel)
	be.RMSNorm(sel, p.m.outputNorm, hp.Eps, sel)
	return sel, nil
}

func (p *pass) logits(rows []int) (compute.Tensor, error) {
	m, be, hp := p.m, p.be, &p.m.HP
	n := len(rows)
	if n == 0 {
		return nil, nil
	}
	sel, err := p.normed(rows, "sel")
	if err != nil {
		return nil, err
	}
	out, err := p.s.get(be, "logits", n, hp.NVocab)
	if err != nil {
		return nil, err
	}
	if err := be.MatMul(m.output, sel, out); err != nil {
		return nil, err
	}
	return out, nil
}
