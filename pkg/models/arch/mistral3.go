package arch

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/compute"
)

// mistral3: the text model of Mistral 3 / Ministral 3, llama's layer and
// RoPE (adjacent pairs) with the scaling of llama.cpp's
// src/models/mistral3.cpp: YaRN (rope.scaling.type yarn with
// rope.scaling.factor, rope.scaling.original_context_length,
// rope.scaling.yarn_beta_fast/slow, rope.scaling.yarn_log_multiplier) and
// llama 4-style attention temperature tuning (attention.temperature_scale).
// The MoE variant and the optional projection biases are not implemented.
var mistral3Family = &family{
	name:     "mistral3",
	rope:     compute.RopeNorm,
	scalings: []string{"yarn"},
	bind:     bindMistral3,
}

func bindMistral3(m *Model, t *tensors, md *meta) error {
	hp := &m.HP
	switch {
	case hp.NRot != hp.HeadDim:
		return fmt.Errorf("mistral3: rope.dimension_count %d must equal the head size %d", hp.NRot, hp.HeadDim)
	case t.has("blk.0.attn_output.bias") || t.has("blk.0.ffn_up.bias") || t.has("blk.0.ffn_gate_inp.weight"):
		return fmt.Errorf("%w: mistral3 with projection biases or experts", ErrUnsupported)
	}
	origCtx := md.uintOr("rope.scaling.original_context_length", hp.NCtxTrain)
	var temp *attnTemp
	if ts := md.floatOr("attention.temperature_scale", 0); ts != 0 {
		temp = &attnTemp{scale: ts, floor: float32(origCtx)}
	}
	typ, err := md.ropeScalingType()
	if err != nil {
		return err
	}
	mscale := float32(1)
	if typ == "yarn" {
		y := yarn{
			factor: 1 / hp.RopeScale, origCtx: origCtx,
			betaFast: md.floatOr("rope.scaling.yarn_beta_fast", 32), betaSlow: md.floatOr("rope.scaling.yarn_beta_slow", 1),
			logMul: md.floatOr("rope.scaling.yarn_log_multiplier", 0), attnFactor: md.floatOr("rope.scaling.attn_factor", 1),
		}
		mscale = y.apply(&m.rope)
	}
	if md.err != nil {
		return md.err
	}
	if err := bindLlama(attnOpts{})(m, t, md); err != nil {
		return err
	}
	for _, l := range m.layers {
		a := &l.(*llamaLayer).attn
		a.scale *= mscale * mscale // YaRN scales q and k by mscale
		a.temp = temp
	}
	return nil
}

// yarn is llama.cpp's YaRN RoPE scaling.
type yarn struct {
	factor             float32
	origCtx            int
	betaFast, betaSlow float32
	logMul, attnFactor float32
}

// apply folds YaRN's per-pair interpolation into r's frequency factors
// (ggml mixes the interpolated angle freq_scale·θ and the extrapolated θ
// by a ramp over the pairs; that is θ divided by one factor per pair) and
// returns the magnitude ggml multiplies cos and sin by, which scales q and
// k alike.
func (y *yarn) apply(r *compute.Rope) float32 {
	fs := 1 / y.factor
	n := float32(r.Dims)
	logf := func(x float32) float32 { return float32(math.Log(float64(x))) }
	corr := func(beta float32) float32 { // ggml_rope_yarn_corr_dim, in float32 as ggml
		return n * logf(float32(y.origCtx)/(beta*2*math.Pi)) / (2 * logf(r.Base))
	}
	lo := max(0, float32(math.Floor(float64(corr(y.betaFast)))))
	hi := min(n-1, float32(math.Ceil(float64(corr(y.betaSlow)))))
	factors := make([]float32, r.Dims/2)
	for i := range factors {
		ramp := float64(1 - min(1, max(0, (float32(i)-lo)/max(0.001, hi-lo))))
		mix := float64(fs)*(1-ramp) + ramp
		ff := 1.0
		if r.FreqFactors != nil {
			ff = float64(r.FreqFactors[i])
		}
		factors[i] = float32(ff / mix)
	}
	r.FreqFactors, r.FreqScale = factors, 1
	// cparams.yarn_attn_factor, then ggml's rope_yarn magnitude.
	mscale := func(scale, m float32) float32 {
		if scale <= 1 {
			return 1
		}
		return 0.1*m*float32(math.Log(float64(scale))) + 1
	}
	attn := mscale(y.factor, 1)
	if y.logMul != 0 {
		attn = mscale(y.factor, 1) / mscale(y.factor, y.logMul)
	}
	attn *= 1 / (1 + 0.1*float32(math.Log(float64(y.factor))))
	attn *= y.attnFactor
	return attn * (1 + 0.1*float32(math.Log(float64(1/fs))))
}
