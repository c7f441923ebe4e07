package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// phi3: Phi-3 and Phi-3.5 (mini, medium), the llama layer with RoPE on
// halves and two fused projections, as llama.cpp's src/models/phi3.cpp
// reads them: attn_qkv holds q, k and v one after another (separate
// attn_q/k/v are accepted too), and ffn_up holds the gate (first n_ff rows)
// and the up projection (the next n_ff). The fused matrices are viewed as
// their parts, so the forward pass and the tensor-parallel split are
// llama's. attention.sliding_window is ignored, as llama.cpp does; the
// LongRoPE factors of the 128k variants are not implemented.
var phi3Family = &family{
	name: "phi3",
	rope: compute.RopeNeox,
	bind: bindPhi3,
}

func bindPhi3(m *Model, t *tensors, _ *meta) error {
	hp := &m.HP
	if t.has("blk.0.rope_factors_long.weight") || t.has("rope_factors_long.weight") {
		return fmt.Errorf("%w: phi3 LongRoPE factors (rope_factors_long/short, the 128k-context variants)", ErrUnsupported)
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
