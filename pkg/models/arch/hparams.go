// Package arch owns the transformer architectures helexa runs (llama,
// qwen2, qwen3, qwen3moe): reading their hyperparameters and weights from a
// GGUF file or a Hugging Face checkpoint (config.json + safetensors), and
// the forward pass written against compute.Backend, and the tensor-parallel
// split of their weights (Shard).
package arch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// Supported lists the architectures helexa can run.
func Supported() []string { return []string{"llama", "qwen2", "qwen3", "qwen3moe"} }

// ErrUnsupported is wrapped by every error about a model feature helexa
// does not implement (architecture, RoPE scaling type, tensor type).
var ErrUnsupported = errors.New("unsupported model")

// UnsupportedArchError reports a general.architecture helexa cannot run.
type UnsupportedArchError struct{ Arch string }

func (e *UnsupportedArchError) Error() string {
	arch := e.Arch
	if arch == "" {
		arch = "(general.architecture missing)"
	}
	return fmt.Sprintf("unsupported architecture %q: helexa supports %s", arch, strings.Join(Supported(), ", "))
}

// Unwrap lets errors.Is(err, ErrUnsupported) match.
func (e *UnsupportedArchError) Unwrap() error { return ErrUnsupported }

// MissingKeyError reports a required metadata key that is absent or has the
// wrong type.
type MissingKeyError struct {
	Key string
	Err error
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("required metadata key %s: %v", e.Key, e.Err)
}

func (e *MissingKeyError) Unwrap() error { return e.Err }

// variant is what distinguishes the supported architectures.
type variant struct {
	rope    compute.RopeMode
	qkvBias bool // qwen2: q/k/v biases
	qkNorm  bool // qwen3*: per-head RMSNorm of q and k before RoPE
	moe     bool // qwen3moe: routed experts instead of a dense FFN
}

func variantOf(arch string) (variant, bool) {
	switch arch {
	case "llama":
		return variant{rope: compute.RopeNorm}, true
	case "qwen2":
		return variant{rope: compute.RopeNeox, qkvBias: true}, true
	case "qwen3":
		return variant{rope: compute.RopeNeox, qkNorm: true}, true
	case "qwen3moe":
		return variant{rope: compute.RopeNeox, qkNorm: true, moe: true}, true
	}
	return variant{}, false
}

// HParams are a model's hyperparameters.
type HParams struct {
	NVocab     int     `json:"n_vocab"`
	NEmbd      int     `json:"n_embd"`
	NLayer     int     `json:"n_layer"`
	NHead      int     `json:"n_head"`
	NHeadKV    int     `json:"n_head_kv"`
	HeadDim    int     `json:"head_dim"`
	NCtxTrain  int     `json:"n_ctx_train"`
	NExpert    int     `json:"n_expert,omitempty"`
	NExpertUse int     `json:"n_expert_used,omitempty"`
	Eps        float32 `json:"rms_eps"`
	RopeBase   float32 `json:"rope_freq_base"`
	RopeScale  float32 `json:"rope_freq_scale"` // 1/linear factor
	NRot       int     `json:"n_rot"`
}

// KVDim is the width of one position's keys (and values) in one layer.
func (h *HParams) KVDim() int { return h.NHeadKV * h.HeadDim }

// meta reads <arch>.<name> keys, collecting the first error.
type meta struct {
	f    *gguf.File
	arch string
	err  error
}

func (m *meta) key(name string) string { return m.arch + "." + name }

func (m *meta) uint(name string) int {
	if m.err != nil {
		return 0
	}
	v, err := m.f.Uint(m.key(name))
	if err != nil {
		m.err = &MissingKeyError{Key: m.key(name), Err: err}
		return 0
	}
	if v == 0 || v > 1<<31 {
		m.err = fmt.Errorf("metadata key %s: value %d out of range", m.key(name), v)
		return 0
	}
	return int(v)
}

func (m *meta) uintOr(name string, def int) int {
	if !m.f.Has(m.key(name)) {
		return def
	}
	return m.uint(name)
}

func (m *meta) float(name string) float32 {
	if m.err != nil {
		return 0
	}
	v, err := m.f.Float(m.key(name))
	if err != nil {
		m.err = &MissingKeyError{Key: m.key(name), Err: err}
	}
	return float32(v)
}

func (m *meta) floatOr(name string, def float32) float32 {
	if !m.f.Has(m.key(name)) {
		return def
	}
	return m.float(name)
}

func readHParams(f *gguf.File, arch string, v variant) (HParams, error) {
	m := &meta{f: f, arch: arch}
	h := HParams{
		NLayer:    m.uint("block_count"),
		NEmbd:     m.uint("embedding_length"),
		NHead:     m.uint("attention.head_count"),
		NCtxTrain: m.uint("context_length"),
		Eps:       m.float("attention.layer_norm_rms_epsilon"),
	}
	if m.err != nil {
		return h, m.err
	}
	h.NHeadKV = m.uintOr("attention.head_count_kv", h.NHead)
	h.HeadDim = m.uintOr("attention.key_length", h.NEmbd/h.NHead)
	if vl := m.uintOr("attention.value_length", h.HeadDim); m.err == nil && vl != h.HeadDim {
		return h, fmt.Errorf("%w: %s (%d) differs from %s (%d)", ErrUnsupported,
			m.key("attention.value_length"), vl, m.key("attention.key_length"), h.HeadDim)
	}
	h.NRot = m.uintOr("rope.dimension_count", h.HeadDim)
	h.RopeBase = m.floatOr("rope.freq_base", 10000)
	if v.moe {
		h.NExpert = m.uint("expert_count")
		h.NExpertUse = m.uint("expert_used_count")
	}
	if m.err != nil {
		return h, m.err
	}
	var err error
	if h.RopeScale, err = ropeScale(m); err != nil {
		return h, err
	}
	return h, checkHParams(&h, arch)
}

// ropeScale reads the RoPE scaling keys as llama.cpp does: linear scaling
// (or none) with rope.scaling.factor (or the older rope.scale_linear).
func ropeScale(m *meta) (float32, error) {
	typ := "linear"
	if m.f.Has(m.key("rope.scaling.type")) {
		var err error
		if typ, err = m.f.String(m.key("rope.scaling.type")); err != nil {
			return 0, &MissingKeyError{Key: m.key("rope.scaling.type"), Err: err}
		}
	}
	if typ != "linear" && typ != "none" {
		return 0, fmt.Errorf("%w: %s = %q (helexa supports linear and none)", ErrUnsupported, m.key("rope.scaling.type"), typ)
	}
	factor := m.floatOr("rope.scaling.factor", 0)
	if factor == 0 {
		factor = m.floatOr("rope.scale_linear", 0)
	}
	if m.err != nil {
		return 0, m.err
	}
	if factor == 0 || typ == "none" {
		return 1, nil
	}
	if factor < 0 {
		return 0, fmt.Errorf("%s: negative factor %g", m.key("rope.scaling.factor"), factor)
	}
	return 1 / factor, nil
}

func checkHParams(h *HParams, arch string) error {
	switch {
	case h.NHeadKV > h.NHead || h.NHead%h.NHeadKV != 0:
		return fmt.Errorf("%s: head_count %d is not a multiple of head_count_kv %d", arch, h.NHead, h.NHeadKV)
	case h.NRot > h.HeadDim || h.NRot%2 != 0:
		return fmt.Errorf("%s: rope.dimension_count %d must be even and at most the head size %d", arch, h.NRot, h.HeadDim)
	case h.Eps <= 0:
		return fmt.Errorf("%s: attention.layer_norm_rms_epsilon %g must be positive", arch, h.Eps)
	case h.NExpertUse > h.NExpert:
		return fmt.Errorf("%s: expert_used_count %d exceeds expert_count %d", arch, h.NExpertUse, h.NExpert)
	}
	return nil
}
