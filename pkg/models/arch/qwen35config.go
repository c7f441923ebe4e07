package arch

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/helexa/helexa/pkg/compute"
)

// deltaConfig is the shape of qwen35's DeltaNet layers and which layers
// attend, from GGUF metadata or from config.json.
type deltaConfig struct {
	convLen, dim, kHeads, vHeads int
	nextn                        int // multi-token-prediction layers at the end (GGUF), not run
	interval                     int // every interval-th layer attends, unless layerTypes says
	layerTypes                   []string
}

// attends reports whether layer i is a gated attention layer.
func (d *deltaConfig) attends(i int) bool {
	if d.layerTypes != nil {
		return d.layerTypes[i] == "full_attention"
	}
	return (i+1)%d.interval == 0
}

// readDeltaConfig reads the DeltaNet hyperparameters of a GGUF (md) or of
// the model's config.json.
func readDeltaConfig(m *Model, md *meta) (deltaConfig, error) {
	var dc deltaConfig
	inner := 0
	if c := m.hf; c != nil {
		dc = deltaConfig{convLen: c.LinearConvKernelDim, dim: c.LinearKeyHeadDim, kHeads: c.LinearNumKeyHeads,
			vHeads: c.LinearNumValueHeads, interval: cmp.Or(c.FullAttentionInterval, 4), layerTypes: c.LayerTypes}
		inner = c.LinearValueHeadDim * c.LinearNumValueHeads
		if dc.layerTypes != nil && len(dc.layerTypes) != m.HP.NLayer {
			return dc, fmt.Errorf("config.json: %d layer_types for %d layers", len(dc.layerTypes), m.HP.NLayer)
		}
	} else {
		dc = deltaConfig{convLen: md.uint("ssm.conv_kernel"), dim: md.uint("ssm.state_size"), kHeads: md.uint("ssm.group_count"),
			vHeads: md.uint("ssm.time_step_rank"), interval: md.uintOr("full_attention_interval", 4), nextn: md.uintOr("nextn_predict_layers", 0)}
		inner = md.uint("ssm.inner_size")
		if md.err != nil {
			return dc, md.err
		}
		var err error
		if dc.layerTypes, err = recurrentLayers(md, m.HP.NLayer); err != nil {
			return dc, err
		}
	}
	switch {
	case dc.convLen < 1 || dc.dim < 1 || dc.kHeads < 1 || dc.vHeads < 1 || dc.interval < 1:
		return dc, fmt.Errorf("%s: DeltaNet sizes %+v must be positive", m.Arch, dc)
	case inner != dc.vHeads*dc.dim:
		return dc, fmt.Errorf("%w: %s value heads of %d values (%d in all), key heads of %d: helexa needs them equal", ErrUnsupported,
			m.Arch, inner/dc.vHeads, inner, dc.dim)
	case dc.vHeads%dc.kHeads != 0:
		return dc, fmt.Errorf("%s: %d value heads are not a multiple of %d key heads", m.Arch, dc.vHeads, dc.kHeads)
	case dc.nextn >= m.HP.NLayer:
		return dc, fmt.Errorf("%s: nextn_predict_layers %d leaves no layers of %d", m.Arch, dc.nextn, m.HP.NLayer)
	}
	return dc, nil
}

// recurrentLayers reads attention.recurrent_layers, the per-layer flags
// that llama.cpp prefers to full_attention_interval, as layer types (nil
// when the file has none).
func recurrentLayers(md *meta, n int) ([]string, error) {
	key := md.key("attention.recurrent_layers")
	if !md.f.Has(key) {
		return nil, nil
	}
	flags, err := md.f.Bools(key)
	if err != nil {
		return nil, &MissingKeyError{Key: key, Err: err}
	}
	if len(flags) != n {
		return nil, fmt.Errorf("metadata key %s: %d flags for %d layers", key, len(flags), n)
	}
	types := make([]string, n)
	for i, recurrent := range flags {
		types[i] = "full_attention"
		if recurrent {
			types[i] = "linear_attention"
		}
	}
	return types, nil
}

// convTaps reads the convolution taps — GGUF's [K, C], a checkpoint's
// [C, 1, K] (ne order [K, 1, C]), each channel's K taps together — and
// lays them out channel-minor, as compute.Backend.ConvSiLU takes them.
func convTaps(t *tensors, name string, k, c int) *compute.Vector {
	var v *compute.Vector
	if t.hf {
		v = t.toF32(name, t.get(name, k, 1, c), k*c)
	} else {
		v = t.vector2(name, k, c)
	}
	if v == nil {
		return nil
	}
	byChannel := v.Data
	v.Data = make([]float32, k*c)
	for ch := 0; ch < c; ch++ {
		for j := 0; j < k; j++ {
			v.Data[j*c+ch] = byChannel[ch*k+j]
		}
	}
	return v
}

// readQwen35HF reads what config.json says beyond the common
// hyperparameters: the rotated fraction of each attention head.
func readQwen35HF(m *Model, c *HFConfig) error {
	frac := 0.25 // transformers' default for Qwen3.5
	if rp := c.RopeParameters; rp != nil {
		if rp.RopeType != "" && rp.RopeType != "default" {
			return fmt.Errorf("%w: config.json rope_parameters rope_type %q", ErrUnsupported, rp.RopeType)
		}
		if rp.PartialRotaryFactor > 0 {
			frac = rp.PartialRotaryFactor
		}
	}
	m.HP.NRot = int(math.Round(float64(m.HP.HeadDim) * frac))
	m.HP.NRot -= m.HP.NRot % 2
	m.rope.Dims = m.HP.NRot
	return nil
}

// qwen35HFNames are the Hugging Face names of qwen35's layer tensors
// beyond llama's (post_attention_layernorm is the FFN's pre-norm, which
// GGUF calls post_attention_norm in this family).
var qwen35HFNames = map[string]string{
	"post_attention_norm.weight": "post_attention_layernorm.weight",
	"attn_qkv.weight":            "linear_attn.in_proj_qkv.weight",
	"attn_gate.weight":           "linear_attn.in_proj_z.weight",
	"ssm_beta.weight":            "linear_attn.in_proj_b.weight",
	"ssm_alpha.weight":           "linear_attn.in_proj_a.weight",
	"ssm_conv1d.weight":          "linear_attn.conv1d.weight",
	"ssm_dt.bias":                "linear_attn.dt_bias",
	"ssm_a":                      "linear_attn.A_log",
	"ssm_norm.weight":            "linear_attn.norm.weight",
	"ssm_out.weight":             "linear_attn.out_proj.weight",
}

// qwen35HFVector does what llama.cpp's converter does to qwen35's vectors:
// A = -exp(A_log), and the RMSNorm weights, which Qwen3.5 applies as
// 1 + w, get their 1 (all but the DeltaNet's gated norm).
func qwen35HFVector(gg string, v []float32) {
	switch {
	case gg == "ssm_a" || strings.HasSuffix(gg, ".ssm_a"):
		for i, x := range v {
			v[i] = -float32(math.Exp(float64(x)))
		}
	case strings.HasSuffix(gg, "norm.weight") && !strings.HasSuffix(gg, "ssm_norm.weight"):
		for i := range v {
			v[i]++
		}
	}
}
