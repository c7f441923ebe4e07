package arch

import "github.com/helexa/helexa/pkg/compute"

// llama: Llama 2/3 and the models that copy it (TinyLlama, SmolLM,
// Mistral 7B): pre-norm layers of attention and a SwiGLU MLP, RoPE on
// adjacent pairs (GGUF's llama rows are permuted for it), an optional
// rope_freqs tensor (llama3 scaling).
var llamaFamily = &family{
	name:      "llama",
	hfClasses: []string{"LlamaForCausalLM"},
	hfTypes:   []string{"llama"},
	rope:      compute.RopeNorm,
	readHF:    noHFExtras,
	bind:      bindLlama(attnOpts{}),
}

// llamaLayer is the pre-norm decoder layer of llama and of the families
// that only change its attention (qwen2, qwen3, mistral3, phi3) or its FFN
// (qwen3moe's routed experts).
type llamaLayer struct {
	attnNorm, ffnNorm *compute.Vector
	attn              attention
	ffn               ffn
}

// bindLlama binds llama layers whose attention has the options o.
func bindLlama(o attnOpts) func(m *Model, t *tensors, md *meta) error {
	return func(m *Model, t *tensors, _ *meta) error {
		for i := range m.layers {
			l := &llamaLayer{}
			l.attnNorm = t.vector(blk(i)+"attn_norm.weight", m.HP.NEmbd)
			l.attn.bind(t, m, i, o)
			l.ffnNorm = t.vector(blk(i)+"ffn_norm.weight", m.HP.NEmbd)
			mlp := &gatedMLP{}
			mlp.bind(t, m, i)
			l.ffn = mlp
			m.layers[i] = l
		}
		return t.err
	}
}

// forward: x += attn(norm(x)); x += ffn(norm(x)).
func (l *llamaLayer) forward(p *pass, il int, hook RoutingHook) error {
	mix := func(p *pass, xb, proj compute.Tensor) error { return l.attn.forward(p, il, xb, proj) }
	return preNormLayer(p, il, l.attnNorm, mix, l.ffnNorm, l.ffn, hook)
}

func (l *llamaLayer) params(ps *paramSet) {
	ps.v(l.attnNorm, l.ffnNorm)
	l.attn.params(ps)
	l.ffn.params(ps)
}

func (l *llamaLayer) shard(sp *shardSpans) (layer, error) {
	s := &llamaLayer{attnNorm: l.attnNorm, ffnNorm: l.ffnNorm}
	var err error
	if s.attn, err = l.attn.shard(sp); err != nil {
		return nil, err
	}
	if s.ffn, err = l.ffn.shardFFN(sp); err != nil {
		return nil, err
	}
	return s, nil
}

func (l *llamaLayer) ffnWidth() int { return l.ffn.width() }
