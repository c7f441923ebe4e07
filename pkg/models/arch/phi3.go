package arch

import (
	"errors"

	"github.com/helexa/helexa/pkg/compute"
)

// phi3: Phi-3 and Phi-3.5 (mini, medium), the llama layer with RoPE on
// halves and two fused projections, as llama.cpp's src/models/phi3.cpp
// reads them: attn_qkv holds q, k and v one after another (separate
// attn_q/k/v are accepted too), and ffn_up holds the gate (first n_ff rows)
// and the up projection (the next n_ff). The fused matrices are viewed as
// their parts, so the forward pass and the tensor-parallel split are
// llama's. attention.sliding_window is ignored, as llama.cpp does. The
// 128k variants' LongRoPE (rope_factors_long/short) divides each pair's
// angle by the long factors when the context the model runs with
// (SetContext) exceeds rope.scaling.original_context_length, by the short
// ones otherwise, and scales q and k by rope.scaling.attn_factor.
var phi3Family = &family{
	name: "phi3",
	rope: compute.RopeNeox,
	bind: bindPhi3,
}

func bindPhi3(m *Model, t *tensors, md *meta) error {
	hp := &m.HP
	scale := float32(1)
	if t.has("rope_factors_long.weight") {
		lr := &longRope{long: t.vector("rope_factors_long.weight", hp.NRot/2), short: t.vector("rope_factors_short.weight", hp.NRot/2),
			orig: md.uintOr("rope.scaling.original_context_length", hp.NCtxTrain)}
		attn := md.floatOr("rope.scaling.attn_factor", 1)
		if md.err != nil || t.err != nil {
			return errors.Join(md.err, t.err)
		}
		m.longRope, m.rope.FreqFactors = lr, lr.short.Data
		scale = attn * attn // q and k both carry the factor
	}
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	for i := range m.layers {
		p := blk(i)
		l := &llamaLayer{}
		l.attnNorm = t.vector(p+"attn_norm.weight", hp.NEmbd)
		if t.has(p + "attn_qkv.weight") {
			qkv := t.matrix(p+"attn_qkv.weight", hp.NEmbd, qDim+2*kvDim)
			qs, ks, vs := span{0, qDim}, span{qDim, kvDim}, span{qDim + kvDim, kvDim}
			if qkv != nil {
				l.attn.wq, l.attn.wk, l.attn.wv = rowSlice(qkv, qs), rowSlice(qkv, ks), rowSlice(qkv, vs)
			}
			if b := t.optVector(p+"attn_qkv.bias", qDim+2*kvDim); b != nil {
				l.attn.bq, l.attn.bk, l.attn.bv = vecSlice(b, qs), vecSlice(b, ks), vecSlice(b, vs)
			}
			l.attn.bindRest(t, m, i, attnOpts{})
		} else {
			l.attn.bind(t, m, i, attnOpts{})
		}
		l.attn.scale *= scale
		l.ffnNorm = t.vector(p+"ffn_norm.weight", hp.NEmbd)
		down := t.matrix(p+"ffn_down.weight", -1, hp.NEmbd)
		if down != nil {
			nff := down.Cols()
			if up := t.matrix(p+"ffn_up.weight", hp.NEmbd, 2*nff); up != nil {
				l.ffn = &gatedMLP{gate: rowSlice(up, span{0, nff}), up: rowSlice(up, span{nff, nff}), down: down}
			}
		}
		m.layers[i] = l
	}
	return t.err
}

// longRope is LongRoPE's two sets of per-pair frequency factors and the
// context length above which the long ones apply.
type longRope struct {
	long, short *compute.Vector
	orig        int
}

// SetContext tells the model the context length it runs with: a LongRoPE
// model (phi3 128k) uses its long factors above its original context and
// its short ones up to it, as llama.cpp chooses by n_ctx. Call it before
// the first pass; other models ignore it.
func (m *Model) SetContext(nCtx int) {
	if lr := m.longRope; lr != nil {
		m.rope.FreqFactors = lr.short.Data
		if nCtx > lr.orig {
			m.rope.FreqFactors = lr.long.Data
		}
	}
}
