package arch

import (
	"math"

	"github.com/helexa/helexa/pkg/compute"
)

// gemma3: the text model of Gemma 3, as llama.cpp's src/models/gemma3.cpp
// runs it: embeddings scaled by sqrt(n_embd); per-head q/k RMSNorm; RMSNorm
// after the attention and after the FFN as well as before them (GGUF norm
// weights already hold Gemma's 1 + w); a GeGLU FFN (tanh GELU); RoPE on
// halves; sliding-window layers (attention.sliding_window positions, RoPE
// base rope.freq_base_swa, default 10000, unscaled) interleaved with global
// ones (every attention.sliding_window_pattern-th layer, default 6, with
// rope.freq_base and the model's RoPE scaling); scores scaled by
// 1/sqrt(key_length) (1/sqrt(n_embd/n_head) for the 62-layer 27B); optional
// final logit soft-capping (final_logit_softcapping).
var gemma3Family = &family{
	name: "gemma3",
	rope: compute.RopeNeox,
	bind: bindGemma3,
}

type gemma3Layer struct {
	attnNorm, attnPostNorm *compute.Vector
	ffnNorm, ffnPostNorm   *compute.Vector
	attn                   attention
	mlp                    gatedMLP
	kvl                    int // index in its KV store (window or full)
}

func bindGemma3(m *Model, t *tensors, md *meta) error {
	hp := &m.HP
	window := md.uintOr("attention.sliding_window", 0)
	period := md.uintOr("attention.sliding_window_pattern", 6)
	local := &compute.Rope{Mode: compute.RopeNeox, Dims: hp.NRot, Base: md.floatOr("rope.freq_base_swa", 10000), FreqScale: 1}
	m.softcap = md.floatOr("final_logit_softcapping", 0)
	if md.err != nil {
		return md.err
	}
	m.rope.FreqFactors = nil // gemma3 has no rope_freqs
	m.embdScale = float32(math.Sqrt(float64(hp.NEmbd)))
	scale := 1 / float32(math.Sqrt(float64(hp.HeadDim)))
	if hp.NLayer == 62 { // Gemma 3 27B (llama.cpp, after gemma_pytorch)
		scale = 1 / float32(math.Sqrt(float64(hp.NEmbd/hp.NHead)))
	}
	hp.Window, hp.NWinLayer = window, 0
	for i := range m.layers {
		p := blk(i)
		l := &gemma3Layer{}
		l.attnNorm = t.vector(p+"attn_norm.weight", hp.NEmbd)
		l.attn.bind(t, m, i, attnOpts{qkNorm: true})
		l.attn.scale = scale
		if window > 0 && i%period < period-1 { // llama.cpp's set_swa_pattern
			l.attn.window, l.attn.rope = window, local
			l.kvl = hp.NWinLayer
			hp.NWinLayer++
		} else {
			l.kvl = i - hp.NWinLayer
		}
		l.attnPostNorm = t.vector(p+"post_attention_norm.weight", hp.NEmbd)
		l.ffnNorm = t.vector(p+"ffn_norm.weight", hp.NEmbd)
		l.mlp.bind(t, m, i)
		l.mlp.gelu = true
		l.ffnPostNorm = t.vector(p+"post_ffw_norm.weight", hp.NEmbd)
		m.layers[i] = l
	}
	return t.err
}

// forward: x += postnorm(attn(norm(x))); x += postnorm(mlp(norm(x))).
func (l *gemma3Layer) forward(p *pass, il int, _ RoutingHook) error {
	xb, proj, err := p.io()
	if err != nil {
		return err
	}
	p.norm(p.x, l.attnNorm, xb)
	if err := l.attn.forward(p, l.kvl, xb, proj); err != nil {
		return err
	}
	if err := p.residual(proj, l.attnPostNorm); err != nil {
		return err
	}
	p.norm(p.x, l.ffnNorm, xb)
	if err := l.mlp.forward(p, il, xb, proj, nil); err != nil {
		return err
	}
	return p.residual(proj, l.ffnPostNorm)
}

func (l *gemma3Layer) params(ps *paramSet) {
	ps.v(l.attnNorm, l.attnPostNorm, l.ffnNorm, l.ffnPostNorm)
	l.attn.params(ps)
	l.mlp.params(ps)
}

func (l *gemma3Layer) shard(sp *shardSpans) (layer, error) {
	s := *l
	var err error
	if s.attn, err = l.attn.shard(sp); err != nil {
		return nil, err
	}
	if s.mlp, err = l.mlp.shard(sp); err != nil {
		return nil, err
	}
	return &s, nil
}

func (l *gemma3Layer) ffnWidth() int { return l.mlp.width() }
