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
			l := &llamaLayer{}
			l.attnNorm = t.vector(blk(i)+"attn_norm.weight", m.HP.NEmbd)
			l.attn.bind(t, m, i, attnOpts{qkNorm: true})
			l.ffnNorm = t.vector(blk(i)+"ffn_norm.weight", m.HP.NEmbd)
			experts := &moe{}
			experts.bind(t, m, i)
			l.ffn = experts
			m.layers[i] = l
		}
		return t.err
	},
}
