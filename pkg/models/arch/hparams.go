package arch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/helexa/helexa/pkg/models/gguf"
)

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
	// NKVLayer is how many layers keep keys and values in the KV cache
	// when only some do (the others are recurrent); 0 means NLayer.
	NKVLayer int `json:"n_kv_layer,omitempty"`
	// Window is the sliding window (positions) of the model's windowed
	// attention layers, and NWinLayer how many layers are windowed (0:
	// none). Their keys and values live in a store of their own, where a
	// sequence holds only the blocks its window still reaches.
	Window    int `json:"sliding_window,omitempty"`
	NWinLayer int `json:"n_swa_layer,omitempty"`
}

// KVDim is the width of one position's keys (and values) in one layer.
func (h *HParams) KVDim() int { return h.NHeadKV * h.HeadDim }

// KVLayers is how many layers the full-context KV store holds (0 when
// every attention layer is windowed).
func (h *HParams) KVLayers() int {
	if h.NKVLayer > 0 {
		return h.NKVLayer
	}
	return h.NLayer - h.NWinLayer
}

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
	if limit := ggufLimit(name); v == 0 || v > uint64(limit) {
		m.err = &LimitError{Source: "GGUF metadata", Key: m.key(name), Value: int64(min(v, 1<<62)), Limit: int64(limit)}
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

// readHParams reads the hyperparameters every family has; scalings are
// the rope.scaling.type values the family implements besides linear and
// none.
func readHParams(m *meta, scalings []string) (HParams, error) {
	arch := m.arch
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
	if m.err != nil {
		return h, m.err
	}
	var err error
	if h.RopeScale, err = ropeScale(m, scalings); err != nil {
		return h, err
	}
	return h, checkHParams(&h, arch)
}

// ropeScale reads the RoPE scaling keys as llama.cpp does: the frequency
// scale is 1/rope.scaling.factor (or the older rope.scale_linear) unless
// rope.scaling.type is none; the type must be linear, none or one of the
// family's scalings.
func ropeScale(m *meta, scalings []string) (float32, error) {
	typ, err := m.ropeScalingType()
	if err != nil {
		return 0, err
	}
	if typ != "linear" && typ != "none" && !slices.Contains(scalings, typ) {
		ok := append([]string{"linear", "none"}, scalings...)
		return 0, fmt.Errorf("%w: %s = %q (helexa supports %s and %s)", ErrUnsupported, m.key("rope.scaling.type"), typ,
			strings.Join(ok[:len(ok)-1], ", "), ok[len(ok)-1])
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

// ropeScalingType is rope.scaling.type (linear when absent).
func (m *meta) ropeScalingType() (string, error) {
	if !m.f.Has(m.key("rope.scaling.type")) {
		return "linear", nil
	}
	typ, err := m.f.String(m.key("rope.scaling.type"))
	if err != nil {
		return "", &MissingKeyError{Key: m.key("rope.scaling.type"), Err: err}
	}
	return typ, nil
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
