package arch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
)

// LoadHF builds a model from a Hugging Face checkpoint: config.json's
// hyperparameters and the safetensors tensors under their Hugging Face
// names. Matrices ([out, in] row-major, which is ggml's ne [in, out]) are
// viewed in place; MoE experts stay separate per-expert tensors. The file
// must stay open while the model is used.
func LoadHF(cfg *HFConfig, f *safetensors.File) (*Model, error) {
	name, err := cfg.Arch()
	if err != nil {
		return nil, err
	}
	v, _ := variantOf(name)
	src, err := newHFSource(f)
	if err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	hp, factors, err := cfg.hparams(v)
	if err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	m := &Model{Arch: name, HP: hp, v: v}
	if err := m.loadHFTensors(&tensors{f: src}, cfg, factors); err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	return m, nil
}

func (m *Model) loadHFTensors(t *tensors, cfg *HFConfig, factors []float32) error {
	hp := &m.HP
	emb := t.matrix("model.embed_tokens.weight", hp.NEmbd, -1)
	if t.err != nil {
		return t.err
	}
	hp.NVocab = emb.Rows()
	if cfg.VocabSize > 0 && cfg.VocabSize != hp.NVocab {
		return fmt.Errorf("config.json vocab_size %d but model.embed_tokens.weight has %d rows", cfg.VocabSize, hp.NVocab)
	}
	m.tokEmbd = emb
	m.outputNorm = t.vector("model.norm.weight", hp.NEmbd)
	m.output = emb
	switch {
	case t.has("lm_head.weight"):
		m.output = t.matrix("lm_head.weight", hp.NEmbd, hp.NVocab)
	case !cfg.TieWordEmbeddings:
		return fmt.Errorf("required tensor lm_head.weight is missing (and config.json does not tie it to the embeddings)")
	}
	m.rope = ropeFor(hp, factors)
	m.layers = make([]layer, hp.NLayer)
	for i := range m.layers {
		m.loadHFLayer(t, i, cfg)
	}
	return t.err
}

func (m *Model) loadHFLayer(t *tensors, i int, cfg *HFConfig) {
	hp := &m.HP
	p := fmt.Sprintf("model.layers.%d.", i)
	a := p + "self_attn."
	l := &m.layers[i]
	m.loadCommon(t, l, layerNames{
		attnNorm: p + "input_layernorm.weight", q: a + "q_proj", k: a + "k_proj", v: a + "v_proj",
		o: a + "o_proj.weight", qNorm: a + "q_norm.weight", kNorm: a + "k_norm.weight",
		ffnNorm: p + "post_attention_layernorm.weight",
		gate:    p + "mlp.gate_proj.weight", up: p + "mlp.up_proj.weight", down: p + "mlp.down_proj.weight",
	})
	if !m.v.moe {
		return
	}
	l.router = t.matrix(p+"mlp.gate.weight", hp.NEmbd, hp.NExpert)
	nff := cfg.MoEIntermediateSize
	if nff <= 0 {
		nff = -1
	}
	for e := 0; e < hp.NExpert && t.err == nil; e++ {
		x := fmt.Sprintf("%smlp.experts.%d.", p, e)
		gate := t.matrix(x+"gate_proj.weight", hp.NEmbd, nff)
		if gate == nil {
			return
		}
		nff = gate.Rows()
		l.gateE = append(l.gateE, gate)
		l.upE = append(l.upE, t.matrix(x+"up_proj.weight", hp.NEmbd, nff))
		l.downE = append(l.downE, t.matrix(x+"down_proj.weight", nff, hp.NEmbd))
	}
}

// hfSource presents safetensors tensors as GGUF tensor infos: the same
// names, the shape reversed into ggml's ne order, the dtype mapped.
type hfSource struct {
	f     *safetensors.File
	infos map[string]*gguf.TensorInfo
	st    map[*gguf.TensorInfo]*safetensors.TensorInfo
}

// newHFSource indexes the checkpoint, failing on a model weight (a
// model.* or lm_head.* tensor) of a dtype helexa cannot compute with.
func newHFSource(f *safetensors.File) (*hfSource, error) {
	s := &hfSource{f: f, infos: map[string]*gguf.TensorInfo{}, st: map[*gguf.TensorInfo]*safetensors.TensorInfo{}}
	for _, ti := range f.Tensors() {
		typ, err := ti.Type()
		if err != nil {
			if strings.HasPrefix(ti.Name, "model.") || strings.HasPrefix(ti.Name, "lm_head.") {
				return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
			continue
		}
		dims := slices.Clone(ti.Shape)
		slices.Reverse(dims)
		g := &gguf.TensorInfo{Name: ti.Name, Dims: dims, Type: typ, Size: ti.Size()}
		s.infos[ti.Name] = g
		s.st[g] = ti
	}
	return s, nil
}

func (s *hfSource) Tensor(name string) (*gguf.TensorInfo, bool) {
	t, ok := s.infos[name]
	return t, ok
}

func (s *hfSource) TensorData(t *gguf.TensorInfo) []byte { return s.f.TensorData(s.st[t]) }

// expert returns expert e's FFN matrices, from the per-expert tensors of a
// safetensors checkpoint or the stacked GGUF ones.
func (l *layer) expert(e int) (gate, up, down *compute.Weight) {
	if l.gateE != nil {
		return l.gateE[e], l.upE[e], l.downE[e]
	}
	return l.gateExps.Mat(e), l.upExps.Mat(e), l.downExps.Mat(e)
}
