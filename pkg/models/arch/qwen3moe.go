package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// qwen3moe: Qwen3 MoE models, qwen3 attention followed by routed experts
// (softmax router, top-k, weights renormalised to sum to 1, as llama.cpp
// hard-codes for this family).
var qwen3moeFamily = &family{
	name:      "qwen3moe",
	hfClasses: []string{"Qwen3MoeForCausalLM"},
	hfTypes:   []string{"qwen3_moe"},
	rope:      compute.RopeNeox,
	readGGUF: func(m *Model, md *meta) error {
		m.HP.NExpert = md.uint("expert_count")
		m.HP.NExpertUse = md.uint("expert_used_count")
		return md.err
	},
	readHF: func(m *Model, c *HFConfig) error {
		switch {
		case c.NormTopKProb != nil && !*c.NormTopKProb:
			return fmt.Errorf("%w: config.json norm_topk_prob false (helexa renormalises the top-k router weights)", ErrUnsupported)
		case len(c.MLPOnlyLayers) > 0 || c.DecoderSparseStep > 1:
			return fmt.Errorf("%w: config.json mlp_only_layers/decoder_sparse_step (dense layers in a MoE model)", ErrUnsupported)
		case c.NumExperts <= 0 || c.NumExpertsPerTok <= 0:
			return fmt.Errorf("config.json: num_experts %d and num_experts_per_tok %d must be positive", c.NumExperts, c.NumExpertsPerTok)
		}
		m.HP.NExpert, m.HP.NExpertUse = c.NumExperts, c.NumExpertsPerTok
		return nil
	},
	bind: func(m *Model, t *tensors, _ *meta) error {
		for i := range m.layers {
			l := &qwen3moeLayer{}
			l.attnNorm = t.vector(blk(i)+"attn_norm.weight", m.HP.NEmbd)
			l.attn.bind(t, m, i, attnOpts{qkNorm: true})
			l.ffnNorm = t.vector(blk(i)+"ffn_norm.weight", m.HP.NEmbd)
			l.moe.bind(t, m, i)
			m.layers[i] = l
		}
		return t.err
	},
}

type qwen3moeLayer struct {
	attnNorm, ffnNorm *compute.Vector
	attn              attention
	moe               moe
}

// forward: x += attn(norm(x)); x += moe(norm(x)).
func (l *qwen3moeLayer) forward(p *pass, il int, hook RoutingHook) error {
	xb, proj, err := p.io()
	if err != nil {
		return err
	}
	p.norm(p.x, l.attnNorm, xb)
	if err := l.attn.forward(p, il, xb, proj); err != nil {
		return err
	}
	if err := p.residual(proj, nil); err != nil {
		return err
	}
	p.norm(p.x, l.ffnNorm, xb)
	if err := l.moe.forward(p, il, xb, proj, hook); err != nil {
		return err
	}
	return p.residual(proj, nil)
}

func (l *qwen3moeLayer) params(ps *paramSet) {
	ps.v(l.attnNorm, l.ffnNorm)
	l.attn.params(ps)
	l.moe.params(ps)
}

func (l *qwen3moeLayer) shard(sp *shardSpans) (layer, error) {
	s := &qwen3moeLayer{attnNorm: l.attnNorm, ffnNorm: l.ffnNorm}
	var err error
	if s.attn, err = l.attn.shard(sp); err != nil {
		return nil, err
	}
	if s.moe, err = l.moe.shard(sp); err != nil {
		return nil, err
	}
	return s, nil
}

func (l *qwen3moeLayer) ffnWidth() int { return l.moe.width() }
