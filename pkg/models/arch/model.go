package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// Model is a loaded architecture: hyperparameters plus weight handles that
// view the GGUF file's memory map (matrices are never copied; only the
// small 1-D norm and bias vectors are converted to F32).
type Model struct {
	Arch string
	HP   HParams

	v          variant
	rope       compute.Rope
	tokEmbd    *compute.Weight
	output     *compute.Weight // token_embd when tied
	outputNorm *compute.Vector
	layers     []layer
}

type layer struct {
	attnNorm, ffnNorm *compute.Vector
	wq, wk, wv, wo    *compute.Weight
	bq, bk, bv        *compute.Vector // qwen2
	qNorm, kNorm      *compute.Vector // qwen3*
	// dense FFN
	gate, up, down *compute.Weight
	// MoE FFN
	router                     *compute.Weight
	gateExps, upExps, downExps *compute.Weight
	// per-expert matrices (safetensors checkpoints store one per expert)
	gateE, upE, downE []*compute.Weight
}

// Load reads the hyperparameters and weights of a supported architecture.
// The file must stay open while the model is used.
func Load(f *gguf.File) (*Model, error) {
	name := f.Arch()
	v, ok := variantOf(name)
	if !ok {
		return nil, &UnsupportedArchError{Arch: name}
	}
	if len(f.Tensors()) == 0 {
		return nil, fmt.Errorf("load %s model: the file has no tensors (a vocabulary-only GGUF?), so there are no weights to run", name)
	}
	hp, err := readHParams(f, name, v)
	if err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	m := &Model{Arch: name, HP: hp, v: v}
	if err := m.loadTensors(&tensors{f: f}); err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	return m, nil
}

// Rope returns the model's RoPE configuration.
func (m *Model) Rope() compute.Rope { return m.rope }

func (m *Model) loadTensors(t *tensors) error {
	hp := &m.HP
	emb := t.matrix("token_embd.weight", hp.NEmbd, -1)
	if t.err != nil {
		return t.err
	}
	hp.NVocab = emb.Rows()
	m.tokEmbd = emb
	m.outputNorm = t.vector("output_norm.weight", hp.NEmbd)
	m.output = emb
	if t.has("output.weight") {
		m.output = t.matrix("output.weight", hp.NEmbd, hp.NVocab)
	}
	m.rope = compute.Rope{Mode: m.v.rope, Dims: hp.NRot, Base: hp.RopeBase, FreqScale: hp.RopeScale}
	if t.has("rope_freqs.weight") {
		if f := t.vector("rope_freqs.weight", hp.NRot/2); f != nil {
			m.rope.FreqFactors = f.Data
		}
	}
	m.layers = make([]layer, hp.NLayer)
	for i := range m.layers {
		m.loadLayer(t, i)
	}
	return t.err
}

func (m *Model) loadLayer(t *tensors, i int) {
	hp := &m.HP
	p := fmt.Sprintf("blk.%d.", i)
	l := &m.layers[i]
	m.loadCommon(t, l, layerNames{
		attnNorm: p + "attn_norm.weight", q: p + "attn_q", k: p + "attn_k", v: p + "attn_v",
		o: p + "attn_output.weight", qNorm: p + "attn_q_norm.weight", kNorm: p + "attn_k_norm.weight",
		ffnNorm: p + "ffn_norm.weight", gate: p + "ffn_gate.weight", up: p + "ffn_up.weight", down: p + "ffn_down.weight",
	})
	if m.v.moe {
		l.router = t.matrix(p+"ffn_gate_inp.weight", hp.NEmbd, hp.NExpert)
		l.gateExps = t.experts(p+"ffn_gate_exps.weight", hp.NEmbd, -1, hp.NExpert)
		if l.gateExps != nil {
			nff := l.gateExps.Rows()
			l.upExps = t.experts(p+"ffn_up_exps.weight", hp.NEmbd, nff, hp.NExpert)
			l.downExps = t.experts(p+"ffn_down_exps.weight", nff, hp.NEmbd, hp.NExpert)
		}
	}
}

// layerNames are the tensor names of one layer in a checkpoint's naming
// scheme (GGUF's blk.N.attn_q, Hugging Face's model.layers.N.self_attn.q_proj).
// q, k and v are prefixes: ".weight" and ".bias" are appended.
type layerNames struct {
	attnNorm, q, k, v, o, qNorm, kNorm string
	ffnNorm, gate, up, down            string
}

// loadCommon loads what every architecture's layer has in either naming
// scheme: the attention block (with its optional biases and q/k norms), the
// FFN norm and, for dense models, the SwiGLU FFN. MoE experts are stored
// differently per scheme and are loaded by the caller.
func (m *Model) loadCommon(t *tensors, l *layer, n layerNames) {
	hp := &m.HP
	qDim, kvDim := hp.NHead*hp.HeadDim, hp.KVDim()
	l.attnNorm = t.vector(n.attnNorm, hp.NEmbd)
	l.wq = t.matrix(n.q+".weight", hp.NEmbd, qDim)
	l.wk = t.matrix(n.k+".weight", hp.NEmbd, kvDim)
	l.wv = t.matrix(n.v+".weight", hp.NEmbd, kvDim)
	l.wo = t.matrix(n.o, qDim, hp.NEmbd)
	if m.v.qkvBias {
		l.bq = t.vector(n.q+".bias", qDim)
		l.bk = t.vector(n.k+".bias", kvDim)
		l.bv = t.vector(n.v+".bias", kvDim)
	}
	if m.v.qkNorm {
		l.qNorm = t.vector(n.qNorm, hp.HeadDim)
		l.kNorm = t.vector(n.kNorm, hp.HeadDim)
	}
	l.ffnNorm = t.vector(n.ffnNorm, hp.NEmbd)
	if m.v.moe {
		return
	}
	l.gate = t.matrix(n.gate, hp.NEmbd, -1)
	if l.gate != nil {
		nff := l.gate.Rows()
		l.up = t.matrix(n.up, hp.NEmbd, nff)
		l.down = t.matrix(n.down, nff, hp.NEmbd)
	}
}

// tensorSource is where tensors are looked up: a GGUF file, or a
// safetensors checkpoint seen through GGUF-style tensor infos.
type tensorSource interface {
	Tensor(name string) (*gguf.TensorInfo, bool)
	TensorData(t *gguf.TensorInfo) []byte
}

// tensors looks tensors up by name, checking shapes and types and keeping
// the first error.
type tensors struct {
	f   tensorSource
	err error
}

func (t *tensors) has(name string) bool { _, ok := t.f.Tensor(name); return ok }

// get returns the tensor after checking its shape; want -1 accepts any size.
func (t *tensors) get(name string, want ...int) *gguf.TensorInfo {
	if t.err != nil {
		return nil
	}
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
	return w
}

func (t *tensors) matrix(name string, cols, rows int) *compute.Weight {
	return t.weight(t.get(name, cols, rows))
}

func (t *tensors) experts(name string, cols, rows, n int) *compute.Weight {
	return t.weight(t.get(name, cols, rows, n))
}

// vector converts a 1-D tensor (a norm weight or bias) to F32.
func (t *tensors) vector(name string, n int) *compute.Vector {
	ti := t.get(name, n)
	if ti == nil {
		return nil
	}
	out := make([]float32, n)
	if err := quant.Dequantize(ti.Type, t.f.TensorData(ti), out); err != nil {
		t.err = fmt.Errorf("%w: tensor %s of type %s: %w", ErrUnsupported, name, ti.Type, err)
		return nil
	}
	return &compute.Vector{Name: name, Data: out}
}
