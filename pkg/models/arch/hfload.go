package arch

import (
	"fmt"
	"slices"
	"strings"

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
	m := &Model{Arch: name, fam: familyOf(name)}
	if err := m.loadHF(cfg, f); err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	return m, nil
}

func (m *Model) loadHF(cfg *HFConfig, f *safetensors.File) error {
	src, err := newHFSource(f)
	if err != nil {
		return err
	}
	hp, factors, err := cfg.hparams()
	if err != nil {
		return err
	}
	m.HP = hp
	m.rope = ropeFor(&m.HP, factors)
	m.hf = cfg
	if err := m.fam.readHF(m, cfg); err != nil {
		return err
	}
	if err := checkHParams(&m.HP, "config.json"); err != nil {
		return err
	}
	t := &tensors{f: src, hf: true, prefix: "model.", names: m.fam.hfNames, fix: m.fam.hfVector}
	if _, ok := src.Tensor("model.language_model.embed_tokens.weight"); ok {
		t.prefix = "model.language_model." // a multimodal checkpoint's text model
	}
	if err := m.bindGlobals(t, cfg.TieWordEmbeddings); err != nil {
		return err
	}
	if cfg.VocabSize > 0 && cfg.VocabSize != m.HP.NVocab {
		return fmt.Errorf("config.json vocab_size %d but model.embed_tokens.weight has %d rows", cfg.VocabSize, m.HP.NVocab)
	}
	if err := m.fam.bind(m, t, nil); err != nil {
		return err
	}
	return t.err
}

// noHFExtras is the readHF of a family whose config.json has nothing
// beyond the common hyperparameters.
func noHFExtras(*Model, *HFConfig) error { return nil }

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
