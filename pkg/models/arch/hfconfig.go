package arch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
)

// hfFamily is the family that loads a config.json architecture, or nil.
func hfFamily(class string) *family {
	for _, f := range families {
		if slices.Contains(f.hfClasses, class) {
			return f
		}
	}
	return nil
}

// SupportedHF lists the Hugging Face architectures (config.json
// "architectures") helexa can run.
func SupportedHF() []string {
	var out []string
	for _, f := range families {
		out = append(out, f.hfClasses...)
	}
	sort.Strings(out)
	return out
}

// UnsupportedHFArchError reports a config.json architecture helexa cannot
// run.
type UnsupportedHFArchError struct{ Architectures []string }

func (e *UnsupportedHFArchError) Error() string {
	got := "(config.json has no \"architectures\")"
	if len(e.Architectures) > 0 {
		got = fmt.Sprintf("%q", strings.Join(e.Architectures, ", "))
	}
	return fmt.Sprintf("unsupported architecture %s: helexa supports %s (GGUF: %s)",
		got, strings.Join(SupportedHF(), ", "), strings.Join(Supported(), ", "))
}

// Unwrap lets errors.Is(err, ErrUnsupported) match.
func (e *UnsupportedHFArchError) Unwrap() error { return ErrUnsupported }

// HFConfig is the part of a Hugging Face config.json helexa reads.
type HFConfig struct {
	Architectures         []string       `json:"architectures"`
	ModelType             string         `json:"model_type"`
	HiddenSize            int            `json:"hidden_size"`
	NumHiddenLayers       int            `json:"num_hidden_layers"`
	NumAttentionHeads     int            `json:"num_attention_heads"`
	NumKeyValueHeads      int            `json:"num_key_value_heads"`
	HeadDim               int            `json:"head_dim"`
	IntermediateSize      int            `json:"intermediate_size"`
	MoEIntermediateSize   int            `json:"moe_intermediate_size"`
	NumExperts            int            `json:"num_experts"`
	NumExpertsPerTok      int            `json:"num_experts_per_tok"`
	NormTopKProb          *bool          `json:"norm_topk_prob"`
	DecoderSparseStep     int            `json:"decoder_sparse_step"`
	MLPOnlyLayers         []int          `json:"mlp_only_layers"`
	RMSNormEps            float64        `json:"rms_norm_eps"`
	RopeTheta             float64        `json:"rope_theta"`
	RopeScaling           *HFRopeScaling `json:"rope_scaling"`
	MaxPositionEmbeddings int            `json:"max_position_embeddings"`
	TieWordEmbeddings     bool           `json:"tie_word_embeddings"`
	VocabSize             int            `json:"vocab_size"`
	HiddenAct             string         `json:"hidden_act"`
	AttentionBias         bool           `json:"attention_bias"`
	MLPBias               bool           `json:"mlp_bias"`
	// RopeParameters is where newer configs (Qwen3.5) keep rope_theta and
	// the rotated fraction of each head.
	RopeParameters *HFRopeParameters `json:"rope_parameters"`
	// TextConfig holds the text model's settings in a multimodal
	// checkpoint (Qwen3.5); ParseHFConfig lifts it to the top.
	TextConfig *HFConfig `json:"text_config"`
	// The gated DeltaNet layers of Qwen3.5 and the layers that attend.
	LinearConvKernelDim   int      `json:"linear_conv_kernel_dim"`
	LinearKeyHeadDim      int      `json:"linear_key_head_dim"`
	LinearValueHeadDim    int      `json:"linear_value_head_dim"`
	LinearNumKeyHeads     int      `json:"linear_num_key_heads"`
	LinearNumValueHeads   int      `json:"linear_num_value_heads"`
	FullAttentionInterval int      `json:"full_attention_interval"`
	LayerTypes            []string `json:"layer_types"`
}

// HFRopeParameters is config.json's rope_parameters.
type HFRopeParameters struct {
	RopeType            string  `json:"rope_type"`
	RopeTheta           float64 `json:"rope_theta"`
	PartialRotaryFactor float64 `json:"partial_rotary_factor"`
}

// HFRopeScaling is config.json's rope_scaling.
type HFRopeScaling struct {
	RopeType                      string  `json:"rope_type"`
	Type                          string  `json:"type"` // older name of rope_type
	Factor                        float64 `json:"factor"`
	LowFreqFactor                 float64 `json:"low_freq_factor"`
	HighFreqFactor                float64 `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings"`
}

// ParseHFConfig decodes a config.json. A multimodal checkpoint's
// text_config becomes the configuration, under the top level's
// architectures and model_type. Every size is range-checked (a
// *LimitError names the key, its value and the limit).
func ParseHFConfig(raw []byte) (*HFConfig, error) {
	var c HFConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	if tc := c.TextConfig; tc != nil {
		t := *tc
		t.Architectures, t.ModelType, t.TextConfig = c.Architectures, cmp.Or(c.ModelType, t.ModelType), nil
		t.TieWordEmbeddings = t.TieWordEmbeddings || c.TieWordEmbeddings
		c = t
	}
	if err := c.checkHFLimits(false); err != nil {
		return nil, err
	}
	return &c, nil
}

// Arch is the helexa architecture of the config's first supported
// "architectures" entry (or, when the config lists none, of its
// "model_type"), or an *UnsupportedHFArchError.
func (c *HFConfig) Arch() (string, error) {
	for _, a := range c.Architectures {
		if f := hfFamily(a); f != nil {
			return f.name, nil
		}
	}
	if len(c.Architectures) == 0 {
		for _, f := range families {
			if c.ModelType != "" && slices.Contains(f.hfTypes, c.ModelType) {
				return f.name, nil
			}
		}
	}
	return "", &UnsupportedHFArchError{Architectures: c.Architectures}
}

// hparams turns the config into HParams (NVocab is filled from the
// embedding) and the RoPE frequency factors (llama3 scaling), if any.
func (c *HFConfig) hparams() (HParams, []float32, error) {
	if err := c.checkHFLimits(true); err != nil {
		return HParams{}, nil, err
	}
	h := HParams{NEmbd: c.HiddenSize, NLayer: c.NumHiddenLayers, NHead: c.NumAttentionHeads,
		NHeadKV: c.NumKeyValueHeads, HeadDim: c.HeadDim, NCtxTrain: c.MaxPositionEmbeddings,
		Eps: float32(c.RMSNormEps), RopeBase: float32(c.RopeTheta), RopeScale: 1}
	if h.NHeadKV <= 0 {
		h.NHeadKV = h.NHead
	}
	if h.HeadDim <= 0 {
		h.HeadDim = h.NEmbd / h.NHead
	}
	h.NRot = h.HeadDim
	if rp := c.RopeParameters; h.RopeBase == 0 && rp != nil {
		h.RopeBase = float32(rp.RopeTheta)
	}
	if h.RopeBase == 0 {
		h.RopeBase = 10000
	}
	if c.RMSNormEps == 0 {
		h.Eps = 1e-6 // transformers' default for these architectures
	}
	if err := c.checkFeatures(); err != nil {
		return h, nil, err
	}
	factors, err := c.ropeScaling(&h)
	if err != nil {
		return h, nil, err
	}
	return h, factors, checkHParams(&h, "config.json")
}

// checkFeatures rejects options the forward pass does not implement.
func (c *HFConfig) checkFeatures() error {
	switch {
	case c.HiddenAct != "" && c.HiddenAct != "silu":
		return fmt.Errorf("%w: config.json hidden_act %q (helexa implements silu)", ErrUnsupported, c.HiddenAct)
	case c.AttentionBias || c.MLPBias:
		return fmt.Errorf("%w: config.json attention_bias/mlp_bias (llama with biases)", ErrUnsupported)
	}
	return nil
}

// ropeScaling applies rope_scaling: none/default, linear (a frequency
// scale) or llama3 (per-frequency factors, computed as llama.cpp's
// converter writes rope_freqs).
func (c *HFConfig) ropeScaling(h *HParams) ([]float32, error) {
	rs := c.RopeScaling
	if rs == nil {
		return nil, nil
	}
	typ := rs.RopeType
	if typ == "" {
		typ = rs.Type
	}
	switch typ {
	case "", "default", "none":
		return nil, nil
	case "linear":
		if rs.Factor <= 0 {
			return nil, fmt.Errorf("config.json: rope_scaling factor %g must be positive", rs.Factor)
		}
		h.RopeScale = float32(1 / rs.Factor)
		return nil, nil
	case "llama3":
		return llama3Factors(rs, float64(h.RopeBase), h.NRot)
	}
	return nil, fmt.Errorf("%w: config.json rope_scaling type %q (helexa supports linear and llama3)", ErrUnsupported, typ)
}

func llama3Factors(rs *HFRopeScaling, base float64, dims int) ([]float32, error) {
	low, high, orig := rs.LowFreqFactor, rs.HighFreqFactor, float64(rs.OriginalMaxPositionEmbeddings)
	if low == 0 {
		low = 1
	}
	if high == 0 {
		high = 4
	}
	if orig == 0 {
		orig = 8192
	}
	if rs.Factor <= 0 || high <= low {
		return nil, fmt.Errorf("config.json: llama3 rope_scaling factor %g, low_freq_factor %g, high_freq_factor %g are inconsistent", rs.Factor, low, high)
	}
	lowWave, highWave := orig/low, orig/high
	out := make([]float32, dims/2)
	for i := range out {
		freq := 1 / math.Pow(base, float64(2*i)/float64(dims))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = float32(rs.Factor)
		default:
			smooth := (orig/wave - low) / (high - low)
			out[i] = float32(1 / ((1-smooth)/rs.Factor + smooth))
		}
	}
	return out, nil
}

// ropeFor is the RoPE of a model loaded from Hugging Face weights: their
// q/k rows are in the original (unpermuted) order, which rotates halves
// (NEOX) for every supported architecture, llama included.
func ropeFor(h *HParams, factors []float32) compute.Rope {
	return compute.Rope{Mode: compute.RopeNeox, Dims: h.NRot, Base: h.RopeBase, FreqScale: h.RopeScale, FreqFactors: factors}
}
