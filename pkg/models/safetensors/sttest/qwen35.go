package sttest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/helexa/helexa/pkg/models/gguf"
)

// qwen35Names are the Hugging Face names of qwen35's layer tensors.
var qwen35Names = map[string]string{
	"attn_norm.weight": "input_layernorm.weight", "post_attention_norm.weight": "post_attention_layernorm.weight",
	"attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
	"attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
	"attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
	"ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
	"attn_qkv.weight": "linear_attn.in_proj_qkv.weight", "attn_gate.weight": "linear_attn.in_proj_z.weight",
	"ssm_beta.weight": "linear_attn.in_proj_b.weight", "ssm_alpha.weight": "linear_attn.in_proj_a.weight",
	"ssm_conv1d.weight": "linear_attn.conv1d.weight", "ssm_dt.bias": "linear_attn.dt_bias", "ssm_a": "linear_attn.A_log",
	"ssm_norm.weight": "linear_attn.norm.weight", "ssm_out.weight": "linear_attn.out_proj.weight",
}

// qwen35 converts a qwen35 GGUF into a Qwen3_5ForConditionalGeneration
// checkpoint: the inverse of llama.cpp's converter (norm weights stored as
// w rather than 1 + w, A_log = log(-A), the convolution as [C, 1, K], and
// value heads grouped by key head instead of tiled).
type qwen35 struct {
	*converter
	kHeads, vHeads, dim int
}

func (c *converter) qwen35Config() map[string]any {
	nEmbd, heads := c.u("embedding_length", 0), c.u("attention.head_count", 1)
	headDim := c.u("attention.key_length", nEmbd/heads)
	layers, interval := c.u("block_count", 0), c.u("full_attention_interval", 4)
	types := make([]string, layers)
	for i := range types {
		types[i] = "linear_attention"
		if (uint64(i)+1)%interval == 0 {
			types[i] = "full_attention"
		}
	}
	emb, _ := c.f.Tensor("token_embd.weight")
	text := map[string]any{
		"model_type": "qwen3_5_text", "hidden_size": nEmbd, "num_hidden_layers": layers,
		"num_attention_heads": heads, "num_key_value_heads": c.u("attention.head_count_kv", heads), "head_dim": headDim,
		"intermediate_size": c.u("feed_forward_length", 0), "hidden_act": "silu",
		"rms_norm_eps":            c.f.FloatOr(c.arch+".attention.layer_norm_rms_epsilon", 1e-6),
		"max_position_embeddings": c.u("context_length", 2048), "vocab_size": emb.Dims[1],
		"linear_conv_kernel_dim": c.u("ssm.conv_kernel", 4), "linear_key_head_dim": c.u("ssm.state_size", 0),
		"linear_value_head_dim": c.u("ssm.state_size", 0), "linear_num_key_heads": c.u("ssm.group_count", 0),
		"linear_num_value_heads": c.u("ssm.time_step_rank", 0), "full_attention_interval": interval, "layer_types": types,
		"rope_parameters": map[string]any{"rope_type": "default", "rope_theta": c.f.FloatOr(c.arch+".rope.freq_base", 1e7),
			"partial_rotary_factor": float64(c.u("rope.dimension_count", headDim)) / float64(headDim), "mrope_interleaved": true},
	}
	return map[string]any{"architectures": []string{"Qwen3_5ForConditionalGeneration"}, "model_type": "qwen3_5",
		"tie_word_embeddings": !c.f.Has("output.weight"), "text_config": text, "torch_dtype": "float32"}
}

func (c *converter) qwen35Weights(dir string) error {
	q := &qwen35{converter: c, kHeads: int(c.u("ssm.group_count", 1)), vHeads: int(c.u("ssm.time_step_rank", 1)),
		dim: int(c.u("ssm.state_size", 1))}
	var out []hfTensor
	for _, ti := range c.f.Tensors() {
		t, err := q.tensor(ti)
		if err != nil {
			return err
		}
		out = append(out, t)
	}
	return writeShards(dir, out, max(c.o.Shards, 1))
}

func (q *qwen35) tensor(ti *gguf.TensorInfo) (hfTensor, error) {
	_, raw, err := q.data(ti)
	if err != nil {
		return hfTensor{}, err
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	shape := make([]uint64, len(ti.Dims))
	for i, d := range ti.Dims {
		shape[len(shape)-1-i] = d
	}
	const p = "model.language_model."
	name, short := "", ti.Name
	switch ti.Name {
	case "token_embd.weight":
		name = p + "embed_tokens.weight"
	case "output_norm.weight":
		name = p + "norm.weight"
	case "output.weight":
		name = "lm_head.weight"
	default:
		m := blkName.FindStringSubmatch(ti.Name)
		hf, ok := "", false
		if m != nil {
			hf, ok = qwen35Names[m[2]]
		}
		if !ok {
			return hfTensor{}, fmt.Errorf("sttest: no Hugging Face name for qwen35 tensor %s", ti.Name)
		}
		layer, _ := strconv.Atoi(m[1])
		name, short = p+"layers."+strconv.Itoa(layer)+"."+hf, m[2]
	}
	shape = q.transform(short, v, shape)
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return hfTensor{name, "F32", shape, data}, nil
}

// transform turns one tensor's values (GGUF name short) into the
// checkpoint's, returning its shape there.
func (q *qwen35) transform(short string, v []float32, shape []uint64) []uint64 {
	inner, keys := q.vHeads*q.dim, 2*q.kHeads*q.dim
	switch {
	case short == "ssm_a":
		for i, x := range v {
			v[i] = float32(math.Log(float64(-x)))
		}
		q.group(v, 1)
	case short == "ssm_dt.bias":
		q.group(v, 1)
	case strings.HasSuffix(short, "norm.weight") && short != "ssm_norm.weight":
		for i := range v {
			v[i]--
		}
	case short == "attn_qkv.weight":
		cols := int(shape[1])
		q.group(v[keys*cols:], q.dim*cols)
	case short == "attn_gate.weight":
		q.group(v, q.dim*int(shape[1]))
	case short == "ssm_alpha.weight" || short == "ssm_beta.weight":
		q.group(v, int(shape[1]))
	case short == "ssm_conv1d.weight": // GGUF rows of K taps per channel
		k := len(v) / (keys + inner)
		q.group(v[keys*k:], q.dim*k)
		return []uint64{uint64(keys + inner), 1, uint64(k)}
	case short == "ssm_out.weight": // columns are value-head values
		rows := int(shape[0])
		for r := 0; r < rows; r++ {
			q.group(v[r*inner:(r+1)*inner], q.dim)
		}
	}
	return shape
}

// group reorders the value heads of v (blocks of block values, one per
// head) from GGUF's tiled order (head r·K + g) to the checkpoint's grouped
// order (head g·R + r), R value heads per key head.
func (q *qwen35) group(v []float32, block int) {
	k, r := q.kHeads, q.vHeads/q.kHeads
	src := append([]float32(nil), v[:q.vHeads*block]...)
	for g := 0; g < k; g++ {
		for i := 0; i < r; i++ {
			copy(v[(g*r+i)*block:(g*r+i+1)*block], src[(i*k+g)*block:(i*k+g+1)*block])
		}
	}
}
