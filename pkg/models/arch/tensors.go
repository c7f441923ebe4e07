package arch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// tensorSource is where tensors are looked up: a GGUF file, or a
// safetensors checkpoint seen through GGUF-style tensor infos.
type tensorSource interface {
	Tensor(name string) (*gguf.TensorInfo, bool)
	TensorData(t *gguf.TensorInfo) []byte
}

// tensors looks tensors up by their GGUF names (translated to Hugging Face
// names for a safetensors checkpoint), checking shapes and types and
// keeping the first error.
type tensors struct {
	f  tensorSource
	hf bool // the source uses Hugging Face names
	// prefix is the Hugging Face names' prefix of the model's own tensors
	// ("model.", or "model.language_model." in a multimodal checkpoint);
	// names are the family's layer names beyond hfLayer; fix converts a
	// vector read from a Hugging Face checkpoint to its GGUF meaning.
	prefix string
	names  map[string]string
	fix    func(gg string, v []float32)
	err    error
}

// blk is the GGUF name prefix of layer i's tensors.
func blk(i int) string { return "blk." + strconv.Itoa(i) + "." }

// hfGlobal and hfLayer map GGUF tensor names to Hugging Face ones (the
// llama naming that every family with Hugging Face loading shares).
var (
	hfGlobal = map[string]string{
		"token_embd.weight":  "model.embed_tokens.weight",
		"output_norm.weight": "model.norm.weight",
		"output.weight":      "lm_head.weight",
	}
	hfLayer = map[string]string{
		"attn_norm.weight":    "input_layernorm.weight",
		"attn_q.weight":       "self_attn.q_proj.weight",
		"attn_k.weight":       "self_attn.k_proj.weight",
		"attn_v.weight":       "self_attn.v_proj.weight",
		"attn_q.bias":         "self_attn.q_proj.bias",
		"attn_k.bias":         "self_attn.k_proj.bias",
		"attn_v.bias":         "self_attn.v_proj.bias",
		"attn_output.weight":  "self_attn.o_proj.weight",
		"attn_q_norm.weight":  "self_attn.q_norm.weight",
		"attn_k_norm.weight":  "self_attn.k_norm.weight",
		"ffn_norm.weight":     "post_attention_layernorm.weight",
		"ffn_gate.weight":     "mlp.gate_proj.weight",
		"ffn_up.weight":       "mlp.up_proj.weight",
		"ffn_down.weight":     "mlp.down_proj.weight",
		"ffn_gate_inp.weight": "mlp.gate.weight",
	}
)

// name is the source's name of the tensor GGUF calls gg.
func (t *tensors) name(gg string) string {
	if !t.hf {
		return gg
	}
	if n, ok := hfGlobal[gg]; ok {
		if rest, ok := strings.CutPrefix(n, "model."); ok {
			return t.prefix + rest
		}
		return n
	}
	if rest, ok := strings.CutPrefix(gg, "blk."); ok {
		if i := strings.IndexByte(rest, '.'); i > 0 {
			n, ok := t.names[rest[i+1:]]
			if !ok {
				n, ok = hfLayer[rest[i+1:]]
			}
			if ok {
				return t.prefix + "layers." + rest[:i] + "." + n
			}
		}
	}
	return gg
}

func (t *tensors) has(name string) bool { _, ok := t.f.Tensor(t.name(name)); return ok }

// get returns the tensor after checking its shape; want -1 accepts any size.
func (t *tensors) get(name string, want ...int) *gguf.TensorInfo {
	if t.err != nil {
		return nil
	}
	name = t.name(name)
	ti, ok := t.f.Tensor(name)
	if !ok {
		t.err = fmt.Errorf("required tensor %s is missing", name)
		return nil
	}
	bad := len(ti.Dims) != len(want)
	for i := 0; !bad && i < len(want); i++ {
		bad = want[i] >= 0 && ti.Dims[i] != uint64(want[i])
	}
	if bad {
		t.err = fmt.Errorf("tensor %s has shape %v, want %v (-1 = any)", name, ti.Dims, want)
		return nil
	}
	return ti
}

func (t *tensors) weight(ti *gguf.TensorInfo) *compute.Weight {
	if ti == nil {
		return nil
	}
	dims := make([]int, len(ti.Dims))
	for i, d := range ti.Dims {
		if d > 1<<31 {
			t.err = fmt.Errorf("tensor %s: dimension %d too large", ti.Name, d)
			return nil
		}
		dims[i] = int(d)
	}
	w, err := compute.NewWeight(ti.Name, ti.Type, dims, t.f.TensorData(ti))
	if err != nil {
		t.err = fmt.Errorf("%w: %w", ErrUnsupported, err)
		return nil
	}
	w.Mapped = true // a GGUF file's tensor data is its read-only mapping
	return w
}

// matrix is a cols × rows weight (ggml ne order: cols first); -1 accepts
// any size.
func (t *tensors) matrix(name string, cols, rows int) *compute.Weight {
	return t.weight(t.get(name, cols, rows))
}

func (t *tensors) experts(name string, cols, rows, n int) *compute.Weight {
	return t.weight(t.get(name, cols, rows, n))
}

// rowWeight is a 1-D tensor of n values seen as a weight of one row (a
// gate computed by a matmul).
func (t *tensors) rowWeight(name string, n int) *compute.Weight {
	ti := t.get(name, n)
	if ti == nil {
		return nil
	}
	w, err := compute.NewWeight(ti.Name, ti.Type, []int{n, 1}, t.f.TensorData(ti))
	if err != nil {
		t.err = fmt.Errorf("%w: %w", ErrUnsupported, err)
		return nil
	}
	return w
}

// vector converts a 1-D tensor (a norm weight or bias) to F32.
func (t *tensors) vector(name string, n int) *compute.Vector {
	return t.toF32(name, t.get(name, n), n)
}

// vector2 converts a small 2-D tensor (cols × rows in ggml order, such as
// a convolution's taps) to F32, row after row.
func (t *tensors) vector2(name string, cols, rows int) *compute.Vector {
	return t.toF32(name, t.get(name, cols, rows), cols*rows)
}

// toF32 converts tensor ti (GGUF name gg) to an F32 vector of n values.
func (t *tensors) toF32(gg string, ti *gguf.TensorInfo, n int) *compute.Vector {
	if ti == nil {
		return nil
	}
	out := make([]float32, n)
	if err := quant.Dequantize(ti.Type, t.f.TensorData(ti), out); err != nil {
		t.err = fmt.Errorf("%w: tensor %s of type %s: %w", ErrUnsupported, ti.Name, ti.Type, err)
		return nil
	}
	if t.hf && t.fix != nil {
		t.fix(gg, out)
	}
	return &compute.Vector{Name: ti.Name, Data: out}
}

// optVector is vector for a tensor that may be absent (nil then).
func (t *tensors) optVector(name string, n int) *compute.Vector {
	if !t.has(name) {
		return nil
	}
	return t.vector(name, n)
}
