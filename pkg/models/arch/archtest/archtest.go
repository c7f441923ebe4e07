// Package archtest builds tiny random-weight GGUF models of the supported
// architectures for tests (of the engine, the scheduler, the API) that need
// a real model without fixtures.
package archtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/synth"
)

// Config describes a tiny model. Zero fields take small defaults.
type Config struct {
	Arch                    string // any arch.Supported() name (default llama)
	Vocab, Embd, Layers, FF int    // defaults 64, 64, 2, 96
	Heads, KVHeads          int    // defaults 4, 2
	Experts, ExpertsUsed    int    // qwen3moe and qwen35moe only; defaults 4, 2
	Type                    dtype.Type
	Seed                    uint64
	SkipKeys                []string              // metadata keys to leave out
	SkipTensors             []string              // tensors to leave out
	TensorTypes             map[string]dtype.Type // per-tensor type overrides (raw bytes when quant cannot quantize it)
	ExtraKeys               map[string]string     // extra string metadata (e.g. rope scaling type)
	ExtraFloats             map[string]float32    // extra f32 metadata (e.g. rope scaling factor)
	ExtraUints              map[string]int        // extra u32 metadata
	RopeFreqs               []float32             // when set, written as rope_freqs.weight (llama3 RoPE factors)
	ContextLength           int                   // default 256
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Arch == "" {
		c.Arch = "llama"
	}
	def(&c.Vocab, 64)
	def(&c.Embd, 64)
	def(&c.Layers, 2)
	def(&c.FF, 96)
	def(&c.Heads, 4)
	def(&c.KVHeads, 2)
	def(&c.Experts, 4)
	def(&c.ExpertsUsed, 2)
	def(&c.ContextLength, 256)
}

// Write builds the model into dir and returns its path.
func Write(dir string, c Config) (string, error) {
	c.defaults()
	w := gguf.NewWriter()
	b := &builder{c: &c, w: w, rng: rand.New(rand.NewPCG(c.Seed, 7))}
	b.metadata()
	b.tensors()
	if b.err != nil {
		return "", b.err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-tiny.gguf", c.Arch))
	return path, w.WriteFile(path)
}

type builder struct {
	c   *Config
	w   *gguf.Writer
	rng *rand.Rand
	err error
}

func (b *builder) metadata() {
	c, a := b.c, b.c.Arch
	w := b.w
	skip := func(k string) bool { return slices.Contains(c.SkipKeys, k) }
	if !skip("general.architecture") {
		w.SetString("general.architecture", a)
	}
	u := func(k string, v int) {
		if !skip(a + "." + k) {
			w.SetUint32(a+"."+k, uint32(v))
		}
	}
	u("context_length", c.ContextLength)
	u("embedding_length", c.Embd)
	u("block_count", c.Layers)
	u("feed_forward_length", c.FF)
	u("attention.head_count", c.Heads)
	u("attention.head_count_kv", c.KVHeads)
	if !skip(a + ".attention.layer_norm_rms_epsilon") {
		w.SetFloat32(a+".attention.layer_norm_rms_epsilon", 1e-5)
	}
	if !skip(a + ".rope.freq_base") {
		w.SetFloat32(a+".rope.freq_base", 10000)
	}
	switch a {
	case "qwen3moe":
		u("expert_count", c.Experts)
		u("expert_used_count", c.ExpertsUsed)
	case "gemma3": // layer 0 local (a 4-position window), layer 1 global, and so on
		u("attention.sliding_window", 4)
		u("attention.sliding_window_pattern", 2)
		w.SetFloat32(a+".final_logit_softcapping", 30)
	case "qwen35", "qwen35moe": // layer 0 gated DeltaNet, layer 1 gated attention, and so on
		if a == "qwen35moe" {
			u("expert_count", c.Experts)
			u("expert_used_count", c.ExpertsUsed)
		}
		u("ssm.conv_kernel", 4)
		u("ssm.state_size", 8)
		u("ssm.group_count", 2)
		u("ssm.time_step_rank", 4)
		u("ssm.inner_size", 32)
		u("full_attention_interval", 2)
		u("rope.dimension_count", c.Embd/c.Heads/2)
	}
	for k, v := range c.ExtraKeys {
		w.SetString(k, v)
	}
	for k, v := range c.ExtraFloats {
		w.SetFloat32(k, v)
	}
	for k, v := range c.ExtraUints {
		w.SetUint32(k, uint32(v))
	}
}

func (b *builder) tensors() {
	c := b.c
	hd := c.Embd / c.Heads
	b.add("token_embd.weight", 0.1, c.Embd, c.Vocab)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		if c.Arch == "qwen35" || c.Arch == "qwen35moe" {
			b.qwen35Layer(p, i, hd)
			continue
		}
		b.norm(p+"attn_norm.weight", c.Embd)
		if c.Arch == "phi3" {
			b.add(p+"attn_qkv.weight", 0, c.Embd, (c.Heads+2*c.KVHeads)*hd)
		} else {
			b.add(p+"attn_q.weight", 0, c.Embd, c.Heads*hd)
			b.add(p+"attn_k.weight", 0, c.Embd, c.KVHeads*hd)
			b.add(p+"attn_v.weight", 0, c.Embd, c.KVHeads*hd)
		}
		if c.Arch == "qwen2" {
			b.vec(p+"attn_q.bias", 0.5, c.Heads*hd)
			b.vec(p+"attn_k.bias", 0.5, c.KVHeads*hd)
			b.vec(p+"attn_v.bias", 0.5, c.KVHeads*hd)
		}
		if c.Arch == "qwen3" || c.Arch == "qwen3moe" || c.Arch == "gemma3" {
			b.norm(p+"attn_q_norm.weight", hd)
			b.norm(p+"attn_k_norm.weight", hd)
		}
		b.add(p+"attn_output.weight", 0, c.Heads*hd, c.Embd)
		if c.Arch == "gemma3" {
			b.norm(p+"post_attention_norm.weight", c.Embd)
		}
		b.norm(p+"ffn_norm.weight", c.Embd)
		switch c.Arch {
		case "qwen3moe":
			b.addF32(p+"ffn_gate_inp.weight", 0, c.Embd, c.Experts)
			b.add(p+"ffn_gate_exps.weight", 0, c.Embd, c.FF, c.Experts)
			b.add(p+"ffn_up_exps.weight", 0, c.Embd, c.FF, c.Experts)
			b.add(p+"ffn_down_exps.weight", 0, c.FF, c.Embd, c.Experts)
			continue
		case "phi3":
			b.add(p+"ffn_up.weight", 0, c.Embd, 2*c.FF)
			b.add(p+"ffn_down.weight", 0, c.FF, c.Embd)
			continue
		}
		b.add(p+"ffn_gate.weight", 0, c.Embd, c.FF)
		b.add(p+"ffn_up.weight", 0, c.Embd, c.FF)
		b.add(p+"ffn_down.weight", 0, c.FF, c.Embd)
		if c.Arch == "gemma3" {
			b.norm(p+"post_ffw_norm.weight", c.Embd)
		}
	}
	b.norm("output_norm.weight", c.Embd)
	if c.RopeFreqs != nil {
		b.put("rope_freqs.weight", dtype.F32, []int{len(c.RopeFreqs)}, c.RopeFreqs)
	}
	switch c.Arch {
	case "llama", "qwen2", "phi3", "mistral3":
		b.add("output.weight", 0.1, c.Embd, c.Vocab)
	}
}

// values draws n normal values scaled by std (0: 1/sqrt(fan_in)).
func (b *builder) values(std float64, dims []int) []float32 {
	if std == 0 {
		std = 1 / math.Sqrt(float64(dims[0]))
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(b.rng.NormFloat64() * std)
	}
	return v
}

func (b *builder) norm(name string, n int) {
	v := b.values(0.05, []int{n})
	for i := range v {
		v[i]++
	}
	b.put(name, dtype.F32, []int{n}, v)
}

func (b *builder) vec(name string, std float64, n int) {
	b.put(name, dtype.F32, []int{n}, b.values(std, []int{n}))
}

func (b *builder) addF32(name string, std float64, dims ...int) {
	b.put(name, dtype.F32, dims, b.values(std, dims))
}

func (b *builder) add(name string, std float64, dims ...int) {
	t := b.c.Type
	if !quant.Supported(t) {
		t = dtype.F32
	}
	b.put(name, t, dims, b.values(std, dims))
}

func (b *builder) put(name string, t dtype.Type, dims []int, v []float32) {
	if b.err != nil || slices.Contains(b.c.SkipTensors, name) {
		return
	}
	if o, ok := b.c.TensorTypes[name]; ok {
		t = o
	}
	b.err = synth.AddTensor(b.w, name, t, dims, v)
}

// qwen35Layer writes layer i of a qwen35 model (see the metadata): a gated
// DeltaNet on even layers, gated attention on odd ones.
func (b *builder) qwen35Layer(p string, i, hd int) {
	c := b.c
	b.norm(p+"attn_norm.weight", c.Embd)
	if i%2 == 1 {
		b.add(p+"attn_q.weight", 0, c.Embd, 2*c.Heads*hd)
		b.add(p+"attn_k.weight", 0, c.Embd, c.KVHeads*hd)
		b.add(p+"attn_v.weight", 0, c.Embd, c.KVHeads*hd)
		b.norm(p+"attn_q_norm.weight", hd)
		b.norm(p+"attn_k_norm.weight", hd)
		b.add(p+"attn_output.weight", 0, c.Heads*hd, c.Embd)
	} else {
		b.add(p+"attn_qkv.weight", 0, c.Embd, 64)
		b.add(p+"attn_gate.weight", 0, c.Embd, 32)
		b.addF32(p+"ssm_conv1d.weight", 0, 4, 64)
		b.vec(p+"ssm_dt.bias", 1, 4)
		b.put(p+"ssm_a", dtype.F32, []int{4}, []float32{-0.5, -1, -2, -0.1})
		b.add(p+"ssm_beta.weight", 0, c.Embd, 4)
		b.add(p+"ssm_alpha.weight", 0, c.Embd, 4)
		b.norm(p+"ssm_norm.weight", 8)
		b.add(p+"ssm_out.weight", 0, 32, c.Embd)
	}
	b.norm(p+"post_attention_norm.weight", c.Embd)
	if c.Arch == "qwen35moe" {
		b.addF32(p+"ffn_gate_inp.weight", 0, c.Embd, c.Experts)
		b.add(p+"ffn_gate_exps.weight", 0, c.Embd, c.FF, c.Experts)
		b.add(p+"ffn_up_exps.weight", 0, c.Embd, c.FF, c.Experts)
		b.add(p+"ffn_down_exps.weight", 0, c.FF, c.Embd, c.Experts)
		b.vec(p+"ffn_gate_inp_shexp.weight", 0.2, c.Embd)
		b.add(p+"ffn_gate_shexp.weight", 0, c.Embd, c.FF)
		b.add(p+"ffn_up_shexp.weight", 0, c.Embd, c.FF)
		b.add(p+"ffn_down_shexp.weight", 0, c.FF, c.Embd)
		return
	}
	b.add(p+"ffn_gate.weight", 0, c.Embd, c.FF)
	b.add(p+"ffn_up.weight", 0, c.Embd, c.FF)
	b.add(p+"ffn_down.weight", 0, c.FF, c.Embd)
}
