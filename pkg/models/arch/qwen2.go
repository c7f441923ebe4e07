package arch

import "github.com/helexa/helexa/pkg/compute"

// qwen2: Qwen2 and Qwen2.5, the llama layer with q/k/v biases and RoPE on
// halves (NEOX).
var qwen2Family = &family{
	name:      "qwen2",
	hfClasses: []string{"Qwen2ForCausalLM"},
	hfTypes:   []string{"qwen2"},
	rope:      compute.RopeNeox,
	readHF:    noHFExtras,
	bind:      bindLlama(attnOpts{bias: true}),
}
