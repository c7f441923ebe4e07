package synth

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// DeltaShape is the gated DeltaNet part of a qwen35 shape: every
// Interval-th layer is gated full attention, the others DeltaNet layers
// with a Conv-tap convolution, KHeads query/key heads and VHeads value
// heads of Dim values.
type DeltaShape struct {
	Conv, Dim, KHeads, VHeads, Interval int
}

// deltaMetadata writes the qwen35 keys: the DeltaNet sizes, the attention
// interval and the RoPE sections (a third of the rotated pairs each, as
// Qwen3.5's [11, 11, 10] for 64 dimensions).
func deltaMetadata(w *gguf.Writer, s Shape) {
	a, d := s.Arch, s.Delta
	u := func(k string, v int) { w.SetUint32(a+"."+k, uint32(v)) }
	u("ssm.conv_kernel", d.Conv)
	u("ssm.state_size", d.Dim)
	u("ssm.group_count", d.KHeads)
	u("ssm.time_step_rank", d.VHeads)
	u("ssm.inner_size", d.VHeads*d.Dim)
	u("full_attention_interval", d.Interval)
	pairs := s.RopeDims / 2
	s0, s1 := (pairs+2)/3, (pairs+1)/3
	w.SetInt32s(a+".rope.dimension_sections", []int32{int32(s0), int32(s1), int32(pairs - s0 - s1), 0})
}

// qwen35Layer writes layer i of a qwen35 or qwen35moe shape: gated
// attention (attn_q projects a query and a gate per head) every
// Interval-th layer, a gated DeltaNet otherwise; post_attention_norm is the
// FFN's pre-norm; the FFN is dense, or routed experts with a gated shared
// expert.
func (b *builder) qwen35Layer(i, vocab int) {
	s, d := b.s, b.s.Delta
	p := fmt.Sprintf("blk.%d.", i)
	qDim, kvDim := s.Heads*s.HeadDim, s.KVHeads*s.HeadDim
	b.norm(p+"attn_norm.weight", s.Embd)
	if (i+1)%d.Interval == 0 {
		b.matrix(p+"attn_q.weight", "", i, 0, s.Embd, 2*qDim)
		b.matrix(p+"attn_k.weight", "k", i, 0, s.Embd, kvDim)
		b.matrix(p+"attn_v.weight", "v", i, 0, s.Embd, kvDim)
		b.norm(p+"attn_q_norm.weight", s.HeadDim)
		b.norm(p+"attn_k_norm.weight", s.HeadDim)
		b.matrix(p+"attn_output.weight", "o", i, 0, qDim, s.Embd)
	} else {
		inner := d.VHeads * d.Dim
		convDim := 2*d.KHeads*d.Dim + inner
		keyDim := d.KHeads * d.Dim
		qkv := b.values(0, s.Embd, s.Embd*convDim)
		b.nearCopy(qkv[keyDim*s.Embd:2*keyDim*s.Embd], qkv[:keyDim*s.Embd])
		b.put(p+"attn_qkv.weight", b.typeFor("qkv", i), []int{s.Embd, convDim}, qkv)
		b.matrix(p+"attn_gate.weight", "", i, 0, s.Embd, inner)
		taps := b.values(0, d.Conv, d.Conv*convDim)
		copy(taps[keyDim*d.Conv:2*keyDim*d.Conv], taps[:keyDim*d.Conv])
		b.put(p+"ssm_conv1d.weight", dtype.F32, []int{d.Conv, convDim}, taps)
		b.put(p+"ssm_dt.bias", dtype.F32, []int{d.VHeads}, b.values(1, 1, d.VHeads))
		a := b.values(0.5, 1, d.VHeads)
		for j := range a {
			a[j] = -float32(math.Exp(float64(a[j]))) // -exp(A_log), as the converter writes it
		}
		b.put(p+"ssm_a", dtype.F32, []int{d.VHeads}, a)
		b.matrix(p+"ssm_beta.weight", "", i, 0, s.Embd, d.VHeads)
		b.matrix(p+"ssm_alpha.weight", "", i, 0, s.Embd, d.VHeads)
		b.norm(p+"ssm_norm.weight", d.Dim)
		b.matrix(p+"ssm_out.weight", "o", i, 0, inner, s.Embd)
	}
	b.norm(p+"post_attention_norm.weight", s.Embd)
	if s.Experts == 0 {
		b.matrix(p+"ffn_gate.weight", "", i, 0, s.Embd, s.FF)
		b.matrix(p+"ffn_up.weight", "", i, 0, s.Embd, s.FF)
		b.matrix(p+"ffn_down.weight", "down", i, 0, s.FF, s.Embd)
		return
	}
	// a decisive router (logits spread over a few units), so that rounding
	// rarely swaps the last chosen expert with the next one
	b.put(p+"ffn_gate_inp.weight", dtype.F32, []int{s.Embd, s.Experts}, b.values(4/math.Sqrt(float64(s.Embd)), 1, s.Embd*s.Experts))
	b.matrix(p+"ffn_gate_exps.weight", "", i, 0, s.Embd, s.ExpertFF, s.Experts)
	b.matrix(p+"ffn_up_exps.weight", "", i, 0, s.Embd, s.ExpertFF, s.Experts)
	b.matrix(p+"ffn_down_exps.weight", "down", i, 0, s.ExpertFF, s.Embd, s.Experts)
	b.put(p+"ffn_gate_inp_shexp.weight", dtype.F32, []int{s.Embd}, b.values(0, s.Embd, s.Embd))
	b.matrix(p+"ffn_gate_shexp.weight", "", i, 0, s.Embd, s.SharedFF)
	b.matrix(p+"ffn_up_shexp.weight", "", i, 0, s.Embd, s.SharedFF)
	b.matrix(p+"ffn_down_shexp.weight", "down", i, 0, s.SharedFF, s.Embd)
}

// nearCopy sets dst to src plus a little noise. A random model whose keys
// are unrelated to its queries has q·k near zero for some heads, where the
// per-head RMSNorm after the delta rule turns any rounding into a sign
// flip; keys close to the queries (as trained models have) keep the
// model's logits as stable under quantization as the other families'.
func (b *builder) nearCopy(dst, src []float32) {
	noise := b.values(0.3/math.Sqrt(float64(b.s.Embd)), 1, len(dst))
	for i := range dst {
		dst[i] = src[i] + noise[i]
	}
}
