package arch

import "github.com/helexa/helexa/pkg/compute"

// qwen3: Qwen3 dense models, the llama layer with a per-head RMSNorm of q
// and k before RoPE (NEOX); the output head is usually tied to the
// embedding.
var qwen3Family = &family{
	name:      "qwen3",
	hfClasses: []string{"Qwen3ForCausalLM"},
	hfTypes:   []string{"qwen3"},
	rope:      compute.RopeNeox,
	readHF:    noHFExtras,
	bind:      bindLlama(attnOpts{qkNorm: true}),
}
