package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// qwen35: Qwen3.5 and Qwen3.6 text models, as llama.cpp's
// src/models/qwen35.cpp runs them: pre-norm layers (attn_norm before the
// mixer, post_attention_norm before the SwiGLU FFN) whose mixer is, in
// three layers of every full_attention_interval (4), a gated DeltaNet
// (linear attention with a per-sequence recurrent state, see
// compute.Backend.GatedDeltaNet), and in the fourth a gated full attention
// (q/k RMSNorm, RoPE on the first rope.dimension_count dimensions of
// each head, the output multiplied by sigmoid of a gate that attn_q
// projects beside each query head). Text positions make the multi-section
// RoPE of these models the NEOX RoPE. The multi-token-prediction layers
// (nextn_predict_layers) are not run. Only the attention layers hold KV
// pages; each sequence carries a State, which is why a cached prefix
// cannot be reused and tensor parallelism is refused.
var qwen35Family = &family{
	name:      "qwen35",
	hfClasses: []string{"Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"},
	hfTypes:   []string{"qwen3_5", "qwen3_5_text"},
	rope:      compute.RopeNeox,
	readHF:    readQwen35HF,
	hfNames:   qwen35HFNames,
	hfVector:  qwen35HFVector,
	bind: bindQwen35(func(t *tensors, m *Model, i int) ffn {
		mlp := &gatedMLP{}
		mlp.bind(t, m, i)
		return mlp
	}),
}

// qwen35moe: Qwen3.5 / Qwen3.6 MoE text models (src/models/qwen35moe.cpp),
// the qwen35 layers with routed experts (softmax router, top-k weights
// renormalised) plus a shared expert whose output is scaled by
// sigmoid(ffn_gate_inp_shexp · x).
var qwen35moeFamily = &family{
	name: "qwen35moe",
	rope: compute.RopeNeox,
	readGGUF: func(m *Model, md *meta) error {
		m.HP.NExpert = md.uint("expert_count")
		m.HP.NExpertUse = md.uint("expert_used_count")
		return md.err
	},
	bind: bindQwen35(func(t *tensors, m *Model, i int) ffn {
		f := &sharedMoE{}
		f.bind(t, m, i)
		return f
	}),
}

// deltaLayer is a qwen35 layer whose mixer is a gated DeltaNet.
type deltaLayer struct {
	attnNorm, postNorm *compute.Vector
	qkv, gate          *compute.Weight // attn_qkv (conv input), attn_gate (z)
	alpha, beta, out   *compute.Weight // ssm_alpha, ssm_beta, ssm_out
	conv, norm         *compute.Vector // ssm_conv1d taps, ssm_norm
	dn                 compute.DeltaNet
	rl                 int // index among the recurrent layers (the State's)
	ffn                ffn
}

// gatedAttnLayer is a qwen35 layer with gated full attention.
type gatedAttnLayer struct {
	attnNorm, postNorm *compute.Vector
	attn               attention // wq projects 2 × head_dim per head: query, gate
	kvl                int       // index among the attention layers (the KV cache's)
	ffn                ffn
}

// bindQwen35 binds qwen35 layers whose FFN ffnOf binds.
func bindQwen35(ffnOf func(t *tensors, m *Model, i int) ffn) func(m *Model, t *tensors, md *meta) error {
	return func(m *Model, t *tensors, md *meta) error { return bindQwen35Layers(m, t, md, ffnOf) }
}

func bindQwen35Layers(m *Model, t *tensors, md *meta, ffnOf func(t *tensors, m *Model, i int) ffn) error {
	hp := &m.HP
	dc, err := readDeltaConfig(m, md)
	if err != nil {
		return err
	}
	hp.NLayer -= dc.nextn
	m.layers = m.layers[:hp.NLayer]
	inner, convDim := dc.vHeads*dc.dim, 2*dc.kHeads*dc.dim+dc.vHeads*dc.dim
	rec := &recurrentShape{convLen: dc.convLen, convDim: convDim, heads: dc.vHeads, dim: dc.dim}
	for i := range m.layers {
		p := blk(i)
		attnNorm := t.vector(p+"attn_norm.weight", hp.NEmbd)
		postNorm := t.vector(p+"post_attention_norm.weight", hp.NEmbd)
		mlp := ffnOf(t, m, i)
		if dc.attends(i) {
			l := &gatedAttnLayer{attnNorm: attnNorm, postNorm: postNorm, kvl: hp.NKVLayer, ffn: mlp}
			qDim := hp.NHead * hp.HeadDim
			l.attn.wq = t.matrix(p+"attn_q.weight", hp.NEmbd, 2*qDim)
			l.attn.wk = t.matrix(p+"attn_k.weight", hp.NEmbd, hp.KVDim())
			l.attn.wv = t.matrix(p+"attn_v.weight", hp.NEmbd, hp.KVDim())
			l.attn.bindRest(t, m, i, attnOpts{qkNorm: true})
			hp.NKVLayer++
			m.layers[i] = l
			continue
		}
		l := &deltaLayer{attnNorm: attnNorm, postNorm: postNorm, rl: rec.layers, ffn: mlp}
		rec.layers++
		l.qkv = t.matrix(p+"attn_qkv.weight", hp.NEmbd, convDim)
		l.gate = t.matrix(p+"attn_gate.weight", hp.NEmbd, inner)
		l.alpha = t.matrix(p+"ssm_alpha.weight", hp.NEmbd, dc.vHeads)
		l.beta = t.matrix(p+"ssm_beta.weight", hp.NEmbd, dc.vHeads)
		l.out = t.matrix(p+"ssm_out.weight", inner, hp.NEmbd)
		l.conv = convTaps(t, p+"ssm_conv1d.weight", dc.convLen, convDim)
		l.norm = t.vector(p+"ssm_norm.weight", dc.dim)
		l.dn = compute.DeltaNet{KHeads: dc.kHeads, VHeads: dc.vHeads, Dim: dc.dim, Eps: hp.Eps, Grouped: t.hf,
			DtBias: t.vector(p+"ssm_dt.bias", dc.vHeads), A: t.vector(p+"ssm_a", dc.vHeads)}
		m.layers[i] = l
	}
	if hp.NKVLayer == 0 {
		return fmt.Errorf("%w: %s model without a full-attention layer", ErrUnsupported, m.Arch)
	}
	if rec.layers > 0 {
		m.rec = rec
	}
	return t.err
}

// forward: x += deltanet(norm(x)); x += ffn(norm(x)).
func (l *deltaLayer) forward(p *pass, il int, hook RoutingHook) error {
	return preNormLayer(p, il, l.attnNorm, l.mix, l.postNorm, l.ffn, hook)
}

// mix is the gated DeltaNet: conv(qkv·x) → delta rule → RMSNorm per head
// × silu(z) → ssm_out.
func (l *deltaLayer) mix(p *pass, xb, proj compute.Tensor) error {
	be, d := p.be, &l.dn
	inner := d.VHeads * d.Dim
	var ts [7]compute.Tensor
	if err := p.tensors(ts[:], buf{"dn.mixed", l.qkv.Rows()}, buf{"dn.conv", l.qkv.Rows()}, buf{"dn.z", inner},
		buf{"dn.alpha", d.VHeads}, buf{"dn.beta", d.VHeads}, buf{"dn.out", inner}, buf{"dn.gated", inner}); err != nil {
		return err
	}
	mixed, conv, z, alpha, beta, out, gated := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6]
	if err := p.matmuls(xb, mm{l.qkv, mixed}, mm{l.gate, z}, mm{l.alpha, alpha}, mm{l.beta, beta}); err != nil {
		return err
	}
	convs, ssms := p.layerStates(l.rl)
	be.ConvSiLU(mixed, p.b.Spans, convs, l.conv, conv)
	be.GatedDeltaNet(conv, alpha, beta, p.b.Spans, ssms, d, out)
	heads := be.View(out, p.rows*d.VHeads, d.Dim)
	be.RMSNorm(heads, l.norm, p.m.HP.Eps, heads)
	be.SwiGLU(z, out, gated)
	return be.MatMul(l.out, gated, proj)
}

// forward: x += gated_attn(norm(x)); x += ffn(norm(x)).
func (l *gatedAttnLayer) forward(p *pass, il int, hook RoutingHook) error {
	return preNormLayer(p, il, l.attnNorm, l.mix, l.postNorm, l.ffn, hook)
}

// mix is attention whose output is gated by sigmoid(gate) before attn_output.
func (l *gatedAttnLayer) mix(p *pass, xb, proj compute.Tensor) error {
	be, hp, a := p.be, &p.m.HP, &l.attn
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	var ts [6]compute.Tensor
	if err := p.tensors(ts[:], buf{"ga.qg", 2 * qDim}, buf{"q", qDim}, buf{"ga.gate", qDim},
		buf{"k", kvDim}, buf{"v", kvDim}, buf{"att", qDim}); err != nil {
		return err
	}
	qg, q, gate, k, v, att := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]
	if err := p.matmuls(xb, mm{a.wq, qg}, mm{a.wk, k}, mm{a.wv, v}); err != nil {
		return err
	}
	be.SplitHeads(qg, hp.NHead, hp.HeadDim, q, gate)
	if err := a.attend(p, l.kvl, q, k, v, att); err != nil {
		return err
	}
	be.SigmoidMul(att, gate)
	return be.MatMul(a.wo, att, proj)
}

func (l *deltaLayer) params(ps *paramSet) {
	ps.w(l.qkv, l.gate, l.alpha, l.beta, l.out)
	ps.v(l.attnNorm, l.postNorm, l.conv, l.norm, l.dn.DtBias, l.dn.A)
	l.ffn.params(ps)
}

func (l *gatedAttnLayer) params(ps *paramSet) {
	ps.v(l.attnNorm, l.postNorm)
	l.attn.params(ps)
	l.ffn.params(ps)
}

// shard is never called: tpReason refuses to split recurrent models.
func (l *deltaLayer) shard(*shardSpans) (layer, error) {
	return nil, fmt.Errorf("%w: recurrent layers are not split across ranks", ErrUnsupported)
}

func (l *gatedAttnLayer) shard(*shardSpans) (layer, error) {
	return nil, fmt.Errorf("%w: the layers of a recurrent model are not split across ranks", ErrUnsupported)
}

func (l *deltaLayer) ffnWidth() int     { return l.ffn.width() }
func (l *gatedAttnLayer) ffnWidth() int { return l.ffn.width() }
