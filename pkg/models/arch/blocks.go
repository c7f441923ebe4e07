package arch

import (
	"math"

	"github.com/helexa/helexa/pkg/compute"
)

// attention is the self-attention block shared by every family: q/k/v
// projections (with optional biases), optional per-head RMSNorm of q and k,
// RoPE, the paged KV cache, causal (optionally sliding-window) attention
// and the output projection.
type attention struct {
	wq, wk, wv, wo *compute.Weight
	bq, bk, bv     *compute.Vector // q/k/v biases, or nil
	qNorm, kNorm   *compute.Vector // per-head RMSNorm before RoPE, or nil
	rope           *compute.Rope
	scale          float32 // of the scores (1/sqrt(head_dim) unless the family says otherwise)
	window         int     // sliding window in positions (the query's own included); 0 = causal over all
	temp           *attnTemp
}

// attnTemp is llama 4-style attention temperature tuning: each query row
// is multiplied by log(floor(pos/floor)+1)·scale + 1.
type attnTemp struct{ scale, floor float32 }

// attnOpts say which optional tensors a family's attention has.
type attnOpts struct{ bias, qkNorm bool }

// bind looks up layer i's attention tensors (separate q, k, v).
func (a *attention) bind(t *tensors, m *Model, i int, o attnOpts) {
	hp := &m.HP
	p := blk(i)
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	a.wq = t.matrix(p+"attn_q.weight", hp.NEmbd, qDim)
	a.wk = t.matrix(p+"attn_k.weight", hp.NEmbd, kvDim)
	a.wv = t.matrix(p+"attn_v.weight", hp.NEmbd, kvDim)
	a.bindRest(t, m, i, o)
}

// bindRest binds what follows the q/k/v projections.
func (a *attention) bindRest(t *tensors, m *Model, i int, o attnOpts) {
	hp := &m.HP
	p := blk(i)
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	a.wo = t.matrix(p+"attn_output.weight", qDim, hp.NEmbd)
	if o.bias {
		a.bq = t.vector(p+"attn_q.bias", qDim)
		a.bk = t.vector(p+"attn_k.bias", kvDim)
		a.bv = t.vector(p+"attn_v.bias", kvDim)
	}
	if o.qkNorm {
		a.qNorm = t.vector(p+"attn_q_norm.weight", hp.HeadDim)
		a.kNorm = t.vector(p+"attn_k_norm.weight", hp.HeadDim)
	}
	a.rope = &m.rope
	a.scale = 1 / float32(math.Sqrt(float64(hp.HeadDim)))
}

func (a *attention) params(ps *paramSet) {
	ps.w(a.wq, a.wk, a.wv, a.wo)
	ps.v(a.bq, a.bk, a.bv, a.qNorm, a.kNorm)
}

// forward computes the block for the normed rows xb into proj (the partial
// sum of this rank: the caller all-reduces it); kvl is the layer's index in
// its KV store.
func (a *attention) forward(p *pass, kvl int, xb, proj compute.Tensor) error {
	be, hp := p.be, &p.m.HP
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	var ts [4]compute.Tensor
	if err := p.tensors(ts[:], buf{"q", qDim}, buf{"k", kvDim}, buf{"v", kvDim}, buf{"att", qDim}); err != nil {
		return err
	}
	q, k, v, att := ts[0], ts[1], ts[2], ts[3]
	if err := p.matmuls(xb, mm{a.wq, q}, mm{a.wk, k}, mm{a.wv, v}); err != nil {
		return err
	}
	for _, b := range [...]struct {
		bias *compute.Vector
		out  compute.Tensor
	}{{a.bq, q}, {a.bk, k}, {a.bv, v}} {
		if b.bias != nil {
			be.AddRow(b.out, b.bias)
		}
	}
	if err := a.attend(p, kvl, q, k, v, att); err != nil {
		return err
	}
	return be.MatMul(a.wo, att, proj)
}

// attend takes projected q, k and v rows through the per-head norms and
// RoPE into layer kvl of its KV store (the window store for a windowed
// layer, the full one otherwise) and attends, writing att.
func (a *attention) attend(p *pass, kvl int, q, k, v, att compute.Tensor) error {
	be, hp := p.be, &p.m.HP
	kvs, spans := p.kv, p.b.Spans
	if a.window > 0 { // the window store, with its own block tables
		kvs, spans = p.win, p.b.WinSpans
	}
	if a.qNorm != nil {
		be.NormRoPEPairStoreKV(q, k, v, a.qNorm, a.kNorm, hp.Eps, p.b.Pos, hp.NHead, hp.NHeadKV, hp.HeadDim, a.rope, kvs,
			kvl, spans)
	} else {
		be.RoPEPairStoreKV(q, k, v, p.b.Pos, hp.NHead, hp.NHeadKV, hp.HeadDim, a.rope, kvs, kvl, spans)
	}
	if a.temp != nil { // q only: the keys are stored as they are
		p.scaleByPos(q, a.temp)
	}
	at := compute.Attn{Heads: hp.NHead, KVHeads: hp.NHeadKV, HeadDim: hp.HeadDim, Scale: a.scale}
	if a.window > 0 {
		be.AttentionWindow(kvs, kvl, spans, &at, a.window, q, att)
		return nil
	}
	be.Attention(kvs, kvl, spans, &at, q, att)
	return nil
}

func (a *attention) shard(sp *shardSpans) (attention, error) {
	s := *a
	s.wq, s.wk, s.wv = rowSlice(a.wq, sp.q), rowSlice(a.wk, sp.kv), rowSlice(a.wv, sp.kv)
	s.bq, s.bk, s.bv = vecSlice(a.bq, sp.q), vecSlice(a.bk, sp.kv), vecSlice(a.bv, sp.kv)
	var err error
	s.wo, err = colSlice(a.wo, sp.q)
	return s, err
}

// ffn is a pre-norm layer's feed-forward block: a gated MLP or routed
// experts.
type ffn interface {
	forward(p *pass, il int, x, out compute.Tensor, hook RoutingHook) error
	params(ps *paramSet)
	shardFFN(sp *shardSpans) (ffn, error)
	// width is the hidden width (of one expert in MoE).
	width() int
}

// gatedMLP is the gated feed-forward block: down(act(gate·x) * up·x) with
// SiLU (SwiGLU) or tanh-GELU (GeGLU).
type gatedMLP struct {
	gate, up, down *compute.Weight
	gelu           bool
}

// bind looks up layer i's ffn_gate, ffn_up and ffn_down.
func (f *gatedMLP) bind(t *tensors, m *Model, i int) {
	hp := &m.HP
	p := blk(i)
	f.gate = t.matrix(p+"ffn_gate.weight", hp.NEmbd, -1)
	if f.gate != nil {
		nff := f.gate.Rows()
		f.up = t.matrix(p+"ffn_up.weight", hp.NEmbd, nff)
		f.down = t.matrix(p+"ffn_down.weight", nff, hp.NEmbd)
	}
}

func (f *gatedMLP) params(ps *paramSet) { ps.w(f.gate, f.up, f.down) }

func (f *gatedMLP) width() int { return f.gate.Rows() }

func (f *gatedMLP) forward(p *pass, _ int, x, out compute.Tensor, _ RoutingHook) error {
	return denseFFN(p.be, p.s, f.gate, f.up, f.down, f.gelu, x, out)
}

func (f *gatedMLP) shardFFN(sp *shardSpans) (ffn, error) {
	s, err := f.shard(sp)
	return &s, err
}

func (f *gatedMLP) shard(sp *shardSpans) (gatedMLP, error) {
	s := gatedMLP{gate: rowSlice(f.gate, sp.ffn), up: rowSlice(f.up, sp.ffn), gelu: f.gelu}
	var err error
	s.down, err = colSlice(f.down, sp.ffn)
	return s, err
}

// denseFFN computes down(act(gate·x) * up·x) for every row of x.
func denseFFN(be compute.Backend, s *Scratch, gate, up, down *compute.Weight, gelu bool, x, out compute.Tensor) error {
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
	if !gelu {
		if err := be.GatedMatMul(gate, up, x, g, u, h); err != nil {
			return err
		}
		return be.MatMul(down, h, out)
	}
	if err := matmuls(be, s, x, mm{gate, g}, mm{up, u}); err != nil {
		return err
	}
	be.GeGLU(g, u, h)
	return be.MatMul(down, h, out)
}

// mm is one product of a multi-weight matmul: x times w into out.
type mm struct {
	w   *compute.Weight
	out compute.Tensor
}

// matmuls multiplies x by several weights in one pass (Backend.MatMuls).
func (p *pass) matmuls(x compute.Tensor, jobs ...mm) error {
	return matmuls(p.be, p.s, x, jobs...)
}

func matmuls(be compute.Backend, s *Scratch, x compute.Tensor, jobs ...mm) error {
	s.mmW, s.mmOut = s.mmW[:0], s.mmOut[:0]
	for _, j := range jobs {
		s.mmW, s.mmOut = append(s.mmW, j.w), append(s.mmOut, j.out)
	}
	return be.MatMuls(s.mmW, x, s.mmOut)
}

// preNormLayer runs x += mix(norm(x)); x += ffn(norm2(x)) for a layer
// whose mixer writes its block output for the normed rows xb into proj.
func preNormLayer(p *pass, il int, norm *compute.Vector, mix func(p *pass, xb, proj compute.Tensor) error,
	norm2 *compute.Vector, f ffn, hook RoutingHook) error {
	xb, proj, err := p.io()
	if err != nil {
		return err
	}
	p.takePending(norm, xb)
	if err := mix(p, xb, proj); err != nil {
		return err
	}
	if err := p.deferResidual(proj); err != nil {
		return err
	}
	p.takePending(norm2, xb)
	if err := f.forward(p, il, xb, proj, hook); err != nil {
		return err
	}
	return p.deferResidual(proj)
}

// preNormed marks the layers built on preNormLayer, which take a residual
// the layer before left pending (pass.deferResidual); the pass adds it
// before any other layer runs.
type preNormed interface{ preNormed() }

func (*llamaLayer) preNormed()     {}
func (*deltaLayer) preNormed()     {}
func (*gatedAttnLayer) preNormed() {}

// deferResidual ends a pre-norm layer: proj, summed over the ranks, is left
// pending, to be added to the residual stream by the next layer's first
// norm (takePending: one AddRMSNorm) or by flush.
func (p *pass) deferResidual(proj compute.Tensor) error {
	if err := p.be.AllReduce(proj); err != nil {
		return err
	}
	p.pending = proj
	return nil
}

// takePending writes norm(p.x)·w into out after adding the pending
// residual, if any, in the same operation.
func (p *pass) takePending(w *compute.Vector, out compute.Tensor) {
	if p.pending == nil {
		p.norm(p.x, w, out)
		return
	}
	p.be.AddRMSNorm(p.x, p.pending, w, p.m.HP.Eps, out)
	p.pending = nil
}

// flush adds the pending residual to p.x (before anything else reads it).
func (p *pass) flush() {
	if p.pending != nil {
		p.be.Add(p.x, p.pending)
		p.pending = nil
	}
}

// io returns the pass's block input and output buffers (rows × NEmbd).
func (p *pass) io() (xb, proj compute.Tensor, err error) {
	var ts [2]compute.Tensor
	err = p.tensors(ts[:], buf{"xb", p.m.HP.NEmbd}, buf{"proj", p.m.HP.NEmbd})
	return ts[0], ts[1], err
}

// norm writes RMSNorm(x)·w into out.
func (p *pass) norm(x compute.Tensor, w *compute.Vector, out compute.Tensor) {
	p.be.RMSNorm(x, w, p.m.HP.Eps, out)
}

// residual completes a block's output across the tensor-parallel ranks,
// applies the optional post-norm and adds it to the residual stream.
func (p *pass) residual(proj compute.Tensor, postNorm *compute.Vector) error {
	if err := p.be.AllReduce(proj); err != nil {
		return err
	}
	if postNorm != nil {
		p.norm(proj, postNorm, proj)
	}
	p.be.Add(p.x, proj)
	return nil
}

// scaleRows multiplies every row of t (p.rows rows) by s.
func (p *pass) scaleRows(t compute.Tensor, s float32) {
	idx, sc := growInts(&p.s.rows, p.rows), growFloats(&p.s.scale, p.rows)
	for i := range idx {
		idx[i], sc[i] = int32(i), s
	}
	p.be.ScaleRowsTo(t, idx, sc, t)
}

// scaleByPos applies attention temperature tuning to the query rows q.
func (p *pass) scaleByPos(q compute.Tensor, a *attnTemp) {
	idx, sc := growInts(&p.s.rows, p.rows), growFloats(&p.s.scale, p.rows)
	for i, pos := range p.b.Pos {
		idx[i] = int32(i)
		sc[i] = float32(math.Log(math.Floor(float64(pos)/float64(a.floor))+1)*float64(a.scale) + 1)
	}
	p.be.ScaleRowsTo(q, idx, sc, q)
}
