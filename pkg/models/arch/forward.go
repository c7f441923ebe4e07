package arch

import (
	"fmt"

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
	// WinSpans are Spans with the block tables of the sliding-window
	// store (Caches.Window), for a model with windowed layers
	// (HParams.NWinLayer > 0); nil otherwise.
	WinSpans []compute.SeqSpan
	// States are the spans' recurrent states, one per span, for a model
	// with recurrent layers (Model.Recurrent); each must be at its span's
	// Pos, and the pass advances it past the span.
	States []*State
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
	bufs  map[string]*scratchBuf
	moe   moeScratch
	rows  []int32   // row indexes of a gather, reused
	scale []float32 // per-row scales, reused
	// convs and ssms are one recurrent layer's state tensors, reused.
	convs, ssms []compute.Tensor
	// mmW and mmOut are the operands of a multi-weight matmul, reused.
	mmW   []*compute.Weight
	mmOut []compute.Tensor
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

// Caches are the KV stores a pass reads and writes: Full holds the layers
// that attend over the whole context (HParams.KVLayers), Window the
// sliding-window layers (HParams.NWinLayer; nil when there are none).
type Caches struct {
	Full, Window compute.KV
}

// pass is one forward pass's state.
type pass struct {
	m    *Model
	be   compute.Backend
	kv   compute.KV
	win  compute.KV
	b    *Batch
	s    *Scratch
	rows int
	x    compute.Tensor // the residual stream, rows × NEmbd
	// pending is a layer's output not yet added to x (deferResidual).
	pending compute.Tensor
}

// Forward runs the batch through the model, writing every row's keys and
// values into the caches, and returns the logits of b.LogitRows and the
// final hidden states of b.HiddenRows.
func (m *Model) Forward(be compute.Backend, kv Caches, b *Batch, s *Scratch, hook RoutingHook) (*Output, error) {
	hp := &m.HP
	rows := len(b.Tokens)
	if len(b.Pos) != rows {
		return nil, fmt.Errorf("forward: %d tokens but %d positions", rows, len(b.Pos))
	}
	if err := m.checkStates(b); err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	if hp.NWinLayer > 0 && (kv.Window == nil || len(b.WinSpans) != len(b.Spans)) {
		return nil, fmt.Errorf("forward: %d windowed layers need the window store and one window span per span (%d spans, %d window spans)",
			hp.NWinLayer, len(b.Spans), len(b.WinSpans))
	}
	x, err := s.get(be, "x", rows, hp.NEmbd)
	if err != nil {
		return nil, err
	}
	if err := be.Embed(m.tokEmbd, b.Tokens, x); err != nil {
		return nil, err
	}
	p := &pass{m: m, be: be, kv: kv.Full, win: kv.Window, b: b, s: s, rows: rows, x: x}
	if m.embdScale != 0 {
		p.scaleRows(x, m.embdScale)
	}
	for il, l := range m.layers {
		if _, ok := l.(preNormed); !ok {
			p.flush()
		}
		if err := l.forward(p, il, hook); err != nil {
			return nil, fmt.Errorf("layer %d: %w", il, err)
		}
	}
	p.flush()
	m.advanceStates(b)
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
	if m.softcap != 0 {
		be.Softcap(out, m.softcap)
	}
	return out, nil
}
