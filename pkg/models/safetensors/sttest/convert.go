// Package sttest converts GGUF models into Hugging Face checkpoint
// directories (config.json, *.safetensors, tokenizer.json,
// tokenizer_config.json) for tests: the same weights under Hugging Face
// names and layout, so a safetensors load can be checked against the GGUF
// one and against llama.cpp's references.
package sttest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
)

// Options tune a conversion.
type Options struct {
	// Shards > 1 splits the weights over that many files plus a
	// model.safetensors.index.json.
	Shards int
	// KeepType keeps F16 and BF16 tensors in their type (others are
	// always written as F32, quantized ones dequantized).
	KeepType bool
}

var hfArch = map[string]string{
	"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
	"qwen3": "Qwen3ForCausalLM", "qwen3moe": "Qwen3MoeForCausalLM", "qwen35": "Qwen3_5ForConditionalGeneration",
}

// Convert writes the Hugging Face form of the GGUF model at src into dir.
// Llama q/k rows get the inverse of llama.cpp's converter permutation, so
// the checkpoint is the one llama.cpp's converter would have read.
func Convert(src, dir string, o Options) error {
	f, err := gguf.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	arch := f.Arch()
	if _, ok := hfArch[arch]; !ok {
		return fmt.Errorf("sttest: cannot convert architecture %q", arch)
	}
	c := &converter{f: f, arch: arch, o: o}
	if arch == "qwen35" {
		if err := writeJSON(filepath.Join(dir, "config.json"), c.qwen35Config()); err != nil {
			return err
		}
		err = c.qwen35Weights(dir)
	} else if err = c.config(dir); err == nil {
		err = c.weights(dir)
	}
	if err != nil {
		return err
	}
	if f.Has("tokenizer.ggml.model") {
		return writeTokenizer(f, dir)
	}
	return nil
}

type converter struct {
	f    *gguf.File
	arch string
	o    Options
}

func (c *converter) u(key string, def uint64) uint64 { return c.f.UintOr(c.arch+"."+key, def) }

func (c *converter) config(dir string) error {
	emb, ok := c.f.Tensor("token_embd.weight")
	if !ok {
		return fmt.Errorf("sttest: %s has no token_embd.weight", c.f.Path())
	}
	nEmbd, heads := c.u("embedding_length", 0), c.u("attention.head_count", 1)
	cfg := map[string]any{
		"architectures":           []string{hfArch[c.arch]},
		"model_type":              c.arch,
		"hidden_size":             nEmbd,
		"num_hidden_layers":       c.u("block_count", 0),
		"num_attention_heads":     heads,
		"num_key_value_heads":     c.u("attention.head_count_kv", heads),
		"head_dim":                c.u("attention.key_length", nEmbd/heads),
		"intermediate_size":       c.u("feed_forward_length", 0),
		"rms_norm_eps":            c.f.FloatOr(c.arch+".attention.layer_norm_rms_epsilon", 1e-5),
		"rope_theta":              c.f.FloatOr(c.arch+".rope.freq_base", 10000),
		"max_position_embeddings": c.u("context_length", 2048),
		"tie_word_embeddings":     !c.f.Has("output.weight"),
		"vocab_size":              emb.Dims[1],
		"hidden_act":              "silu",
		"torch_dtype":             "float32",
	}
	if c.arch == "qwen3moe" {
		cfg["num_experts"] = c.u("expert_count", 0)
		cfg["num_experts_per_tok"] = c.u("expert_used_count", 0)
		cfg["norm_topk_prob"] = true
		if g, ok := c.f.Tensor("blk.0.ffn_gate_exps.weight"); ok {
			cfg["moe_intermediate_size"] = g.Dims[1]
		}
	}
	for key, name := range map[string]string{"bos_token_id": "tokenizer.ggml.bos_token_id", "eos_token_id": "tokenizer.ggml.eos_token_id"} {
		if v, err := c.f.Uint(name); err == nil {
			cfg[key] = v
		}
	}
	return writeJSON(filepath.Join(dir, "config.json"), cfg)
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

var blkName = regexp.MustCompile(`^blk\.(\d+)\.(.+)$`)

var layerNames = map[string]string{
	"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
	"attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
	"attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
	"attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias", "attn_v.bias": "self_attn.v_proj.bias",
	"attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
	"ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
	"ffn_gate_inp.weight": "mlp.gate.weight",
}

var expertNames = map[string]string{
	"ffn_gate_exps.weight": "gate_proj.weight", "ffn_up_exps.weight": "up_proj.weight", "ffn_down_exps.weight": "down_proj.weight",
}

// hfTensor is one output tensor.
type hfTensor struct {
	name  string
	dtype string
	shape []uint64
	data  []byte
}

func (c *converter) weights(dir string) error {
	var out []hfTensor
	for _, ti := range c.f.Tensors() {
		ts, err := c.tensor(ti)
		if err != nil {
			return err
		}
		out = append(out, ts...)
	}
	return writeShards(dir, out, max(c.o.Shards, 1))
}

// tensor renames, converts and (llama q/k) un-permutes one GGUF tensor.
func (c *converter) tensor(ti *gguf.TensorInfo) ([]hfTensor, error) {
	stName, data, err := c.data(ti)
	if err != nil {
		return nil, err
	}
	shape := make([]uint64, len(ti.Dims))
	for i, d := range ti.Dims {
		shape[len(shape)-1-i] = d
	}
	switch ti.Name {
	case "token_embd.weight":
		return []hfTensor{{"model.embed_tokens.weight", stName, shape, data}}, nil
	case "output_norm.weight":
		return []hfTensor{{"model.norm.weight", stName, shape, data}}, nil
	case "output.weight":
		return []hfTensor{{"lm_head.weight", stName, shape, data}}, nil
	case "rope_freqs.weight":
		return nil, fmt.Errorf("sttest: cannot express rope_freqs.weight as a config.json rope_scaling")
	}
	m := blkName.FindStringSubmatch(ti.Name)
	if m == nil {
		return nil, fmt.Errorf("sttest: no Hugging Face name for tensor %s", ti.Name)
	}
	layer, _ := strconv.Atoi(m[1])
	p := fmt.Sprintf("model.layers.%d.", layer)
	if hf, ok := layerNames[m[2]]; ok {
		if c.arch == "llama" && (m[2] == "attn_q.weight" || m[2] == "attn_k.weight") {
			heads := c.u("attention.head_count", 1)
			if m[2] == "attn_k.weight" {
				heads = c.u("attention.head_count_kv", heads)
			}
			data = unpermute(data, int(ti.Dims[1]), int(heads))
		}
		return []hfTensor{{p + hf, stName, shape, data}}, nil
	}
	if hf, ok := expertNames[m[2]]; ok {
		n := int(ti.Dims[2])
		size := len(data) / n
		ts := make([]hfTensor, n)
		for e := range ts {
			ts[e] = hfTensor{fmt.Sprintf("%smlp.experts.%d.%s", p, e, hf), stName, shape[1:], data[e*size : (e+1)*size]}
		}
		return ts, nil
	}
	return nil, fmt.Errorf("sttest: no Hugging Face name for tensor %s", ti.Name)
}

// data returns the tensor's bytes in a safetensors dtype: F16/BF16 kept
// when asked, everything else as F32.
func (c *converter) data(ti *gguf.TensorInfo) (string, []byte, error) {
	raw := c.f.TensorData(ti)
	if c.o.KeepType && ti.Type == dtype.F16 {
		return "F16", append([]byte(nil), raw...), nil
	}
	if c.o.KeepType && ti.Type == dtype.BF16 {
		return "BF16", append([]byte(nil), raw...), nil
	}
	vals := make([]float32, ti.Elements())
	if err := quant.Dequantize(ti.Type, raw, vals); err != nil {
		return "", nil, fmt.Errorf("sttest: tensor %s: %w", ti.Name, err)
	}
	out := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return "F32", out, nil
}

// unpermute undoes llama.cpp's permute(w, n_head) on a matrix of rows
// rows: GGUF row 2b+a of a head is Hugging Face row a*hd/2+b.
func unpermute(data []byte, rows, heads int) []byte {
	rb := len(data) / rows
	hd := rows / heads
	out := make([]byte, len(data))
	for h := 0; h < heads; h++ {
		for a := 0; a < 2; a++ {
			for b := 0; b < hd/2; b++ {
				dst := h*hd + a*hd/2 + b
				src := h*hd + 2*b + a
				copy(out[dst*rb:(dst+1)*rb], data[src*rb:(src+1)*rb])
			}
		}
	}
	return out
}

// writeShards writes the tensors into n files (model.safetensors, or
// model-0000i-of-0000n.safetensors with an index).
func writeShards(dir string, ts []hfTensor, n int) error {
	if n == 1 {
		w := safetensors.NewWriter()
		w.SetMetadata("format", "pt")
		for _, t := range ts {
			if err := w.AddTensor(t.name, t.dtype, t.shape, t.data); err != nil {
				return err
			}
		}
		return w.WriteFile(filepath.Join(dir, "model.safetensors"))
	}
	weightMap := map[string]string{}
	var total int64
	per := (len(ts) + n - 1) / n
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n)
		w := safetensors.NewWriter()
		w.SetMetadata("format", "pt")
		for _, t := range ts[min(i*per, len(ts)):min((i+1)*per, len(ts))] {
			if err := w.AddTensor(t.name, t.dtype, t.shape, t.data); err != nil {
				return err
			}
			weightMap[t.name] = name
			total += int64(len(t.data))
		}
		if err := w.WriteFile(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return safetensors.WriteIndex(dir, weightMap, total)
}
