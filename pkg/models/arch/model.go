package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// Model is a loaded architecture: hyperparameters plus weight handles that
// view the GGUF file's memory map (matrices are never copied; only the
// small 1-D norm and bias vectors are converted to F32).
type Model struct {
	Arch string
	HP   HParams

	fam        *family
	rope       compute.Rope // the RoPE of the global-attention layers
	tokEmbd    *compute.Weight
	output     *compute.Weight // token_embd when tied
	outputNorm *compute.Vector
	embdScale  float32 // embeddings are multiplied by it (gemma); 0 = not
	softcap    float32 // final logit soft-capping (gemma); 0 = none
	layers     []layer
	rec        *recurrentShape // nil: no recurrent layers
	hf         *HFConfig       // the config.json of a Hugging Face checkpoint (nil: GGUF)
	longRope   *longRope       // phi3 LongRoPE factors (nil: none)
}

// layer is one decoder block of a family.
type layer interface {
	// forward runs the layer over the pass's residual stream.
	forward(p *pass, il int, hook RoutingHook) error
	// params adds the layer's weights and vectors to ps.
	params(ps *paramSet)
	// shard returns one rank's share of the layer.
	shard(sp *shardSpans) (layer, error)
	// ffnWidth is the hidden width of the FFN (of one expert in MoE).
	ffnWidth() int
}

// Load reads the hyperparameters and weights of a supported architecture.
// The file must stay open while the model is used.
func Load(f *gguf.File) (*Model, error) {
	name := f.Arch()
	fam := familyOf(name)
	if fam == nil {
		return nil, &UnsupportedArchError{Arch: name}
	}
	if len(f.Tensors()) == 0 {
		return nil, fmt.Errorf("load %s model: the file has no tensors (a vocabulary-only GGUF?), so there are no weights to run", name)
	}
	m := &Model{Arch: name, fam: fam}
	if err := m.loadGGUF(f); err != nil {
		return nil, fmt.Errorf("load %s model: %w", name, err)
	}
	return m, nil
}

func (m *Model) loadGGUF(f *gguf.File) error {
	md := &meta{f: f, arch: m.Arch}
	hp, err := readHParams(md, m.fam.scalings)
	if err != nil {
		return err
	}
	m.HP = hp
	m.rope = compute.Rope{Mode: m.fam.rope, Dims: hp.NRot, Base: hp.RopeBase, FreqScale: hp.RopeScale}
	t := &tensors{f: f}
	if t.has("rope_freqs.weight") {
		if v := t.vector("rope_freqs.weight", hp.NRot/2); v != nil {
			m.rope.FreqFactors = v.Data
		}
	}
	if m.fam.readGGUF != nil {
		if err := m.fam.readGGUF(m, md); err != nil {
			return err
		}
		if err := checkHParams(&m.HP, m.Arch); err != nil {
			return err
		}
	}
	if err := m.bindGlobals(t, true); err != nil {
		return err
	}
	if err := m.fam.bind(m, t, md); err != nil {
		return err
	}
	return t.err
}

// bindGlobals looks up the token embedding, the output norm and the output
// head (the embedding when the checkpoint ties them and tied is allowed).
func (m *Model) bindGlobals(t *tensors, tied bool) error {
	hp := &m.HP
	emb := t.matrix("token_embd.weight", hp.NEmbd, -1)
	if t.err != nil {
		return t.err
	}
	hp.NVocab = emb.Rows()
	m.tokEmbd = emb
	m.outputNorm = t.vector("output_norm.weight", hp.NEmbd)
	m.output = emb
	switch {
	case t.has("output.weight"):
		m.output = t.matrix("output.weight", hp.NEmbd, hp.NVocab)
	case !tied:
		return fmt.Errorf("required tensor %s is missing (and config.json does not tie it to the embeddings)", t.name("output.weight"))
	}
	m.layers = make([]layer, hp.NLayer)
	return t.err
}

// Rope returns the model's RoPE configuration (of its global-attention
// layers, where a family has several).
func (m *Model) Rope() compute.Rope { return m.rope }

// paramSet collects a model's weights and vectors for Prepare.
type paramSet struct {
	ws []*compute.Weight
	vs []*compute.Vector
}

func (ps *paramSet) w(ws ...*compute.Weight) { ps.ws = append(ps.ws, ws...) }
func (ps *paramSet) v(vs ...*compute.Vector) { ps.vs = append(ps.vs, vs...) }

// Prepare hands every weight and parameter vector of the model to the
// backend once, before the first pass (a GPU backend uploads them).
func (m *Model) Prepare(be compute.Backend) error {
	if m.tokEmbd != nil && m.tokEmbd != m.output {
		m.tokEmbd.Lookup = true // only its rows are read; a tied table is the output head too
	}
	ps := &paramSet{}
	ps.w(m.tokEmbd, m.output)
	ps.v(m.outputNorm)
	for _, l := range m.layers {
		l.params(ps)
	}
	ws, vs := ps.unique()
	if fb, ok := be.(compute.FitBackend); ok {
		if err := fb.CheckFits(ws, vs); err != nil {
			return err
		}
	}
	for _, w := range ws {
		if err := be.Prepare(w); err != nil {
			return fmt.Errorf("preparing %s: %w", w.Name, err)
		}
	}
	for _, v := range vs {
		if err := be.PrepareVector(v); err != nil {
			return fmt.Errorf("preparing %s: %w", v.Name, err)
		}
	}
	return nil
}

// unique is the set's weights (absent ones and repeats left out: a tied
// output head is the embedding) and vectors (absent ones left out).
func (ps *paramSet) unique() ([]*compute.Weight, []*compute.Vector) {
	var ws []*compute.Weight
	seen := map[*compute.Weight]bool{}
	for _, w := range ps.ws {
		if w != nil && !seen[w] {
			seen[w] = true
			ws = append(ws, w)
		}
	}
	var vs []*compute.Vector
	for _, v := range ps.vs {
		if v != nil {
			vs = append(vs, v)
		}
	}
	return ws, vs
}
