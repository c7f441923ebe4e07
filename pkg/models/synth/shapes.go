package synth

import (
	"fmt"
	"strings"
)

// Shapes lists the shapes --shape accepts: real models' shapes, and the
// tiny models of the architecture reference tests (the 512-token
// stories260K vocabulary, widths of 256, every feature of the family the
// llama.cpp anchor reads switched on).
func Shapes() []Shape {
	return []Shape{
		{Name: "qwen3-0.6b", Arch: "qwen3", Embd: 1024, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128, FF: 3072,
			Tied: true, QKNorm: true, RopeBase: 1e6, Eps: 1e-6, Context: 40960, VocabFile: "tokenizer/vocab-qwen3.gguf"},
		{Name: "llama-3.2-1b", Arch: "llama", Embd: 2048, Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 64, FF: 8192,
			Tied: true, Llama3Rope: true, RopeBase: 500000, Eps: 1e-5, Context: 131072, VocabFile: "tokenizer/vocab-llama3.gguf"},
		{Name: "qwen3moe-32x4", Arch: "qwen3moe", Embd: 1024, Layers: 10, Heads: 16, KVHeads: 4, HeadDim: 128,
			Experts: 32, ExpertsUsed: 4, ExpertFF: 768, Tied: true, QKNorm: true, RopeBase: 1e6, Eps: 1e-6, Context: 40960,
			VocabFile: "tokenizer/vocab-qwen3.gguf"},
		{Name: "phi3-tiny", Arch: "phi3", Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 768,
			GeneralName: "synth tiny fused-qkv", FusedQKV: true, FusedUpGate: true, RopeBase: 10000, Eps: 1e-5, Context: 4096, VocabFile: tinyVocab},
		// Phi-3.5-mini's LongRoPE at tiny size: a context of 2048 over an
		// original 128, long factors up to 16, attention factor
		// sqrt(1 + ln 16 / ln 128) as the converter computes it.
		{Name: "phi35-tiny", Arch: "phi3", Embd: 256, Layers: 2, Heads: 4, KVHeads: 4, HeadDim: 64, FF: 768,
			GeneralName: "synth tiny long-rope", FusedQKV: true, FusedUpGate: true, LongRope: true, RopeBase: 10000, Eps: 1e-5,
			Context: 2048, VocabFile: tinyVocab, Uints: map[string]int{"rope.scaling.original_context_length": 128},
			Floats: map[string]float32{"rope.scaling.attn_factor": 1.2535663}},
		{Name: "mistral3-tiny", Arch: "mistral3", Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 768,
			RopeBase: 1e6, Eps: 1e-5, Context: 2048, VocabFile: tinyVocab,
			Strings: map[string]string{"rope.scaling.type": "yarn"},
			Uints:   map[string]int{"rope.scaling.original_context_length": 128},
			Floats: map[string]float32{"rope.scaling.factor": 16, "rope.scaling.yarn_beta_fast": 32, "rope.scaling.yarn_beta_slow": 1,
				"rope.scaling.yarn_log_multiplier": 1, "attention.temperature_scale": 0.1}},
		{Name: "gemma3-tiny", Arch: "gemma3", Embd: 256, Layers: 6, Heads: 4, KVHeads: 2, HeadDim: 64, FF: 768,
			QKNorm: true, PostNorms: true, Tied: true, RopeBase: 1e6, Eps: 1e-6, Context: 2048, VocabFile: tinyVocab,
			Uints:   map[string]int{"attention.sliding_window": 32},
			Strings: map[string]string{"rope.scaling.type": "linear"},
			Floats:  map[string]float32{"rope.scaling.factor": 8, "final_logit_softcapping": 30}},
		{Name: "qwen35-tiny", Arch: "qwen35", Embd: 256, Layers: 8, Heads: 4, KVHeads: 2, HeadDim: 64, RopeDims: 16, FF: 768,
			Tied: true, RopeBase: 1e7, Eps: 1e-6, Context: 2048, VocabFile: tinyVocab,
			Delta: &DeltaShape{Conv: 4, Dim: 32, KHeads: 2, VHeads: 4, Interval: 4}},
		{Name: "qwen35moe-tiny", Arch: "qwen35moe", Embd: 256, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 64, RopeDims: 16,
			Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SharedFF: 256, Tied: true, RopeBase: 1e7, Eps: 1e-6, Context: 2048,
			VocabFile: tinyVocab, Delta: &DeltaShape{Conv: 4, Dim: 32, KHeads: 2, VHeads: 4, Interval: 4}},
		// Qwen3.6-27B's pattern (three DeltaNet layers to one gated
		// attention layer, 16 key and 48 value heads → 4 and 12, head
		// sizes 128 and 256, a quarter of each attention head rotated) at
		// a fifth of its width and a quarter of its depth.
		{Name: "qwen36-27b-narrow", Arch: "qwen35", Embd: 1024, Layers: 16, Heads: 8, KVHeads: 2, HeadDim: 256, RopeDims: 64,
			FF: 3584, Tied: true, RopeBase: 1e7, Eps: 1e-6, Context: 262144, VocabFile: "tokenizer/vocab-qwen3.gguf",
			Delta: &DeltaShape{Conv: 4, Dim: 128, KHeads: 4, VHeads: 12, Interval: 4}},
	}
}

// tinyVocab is the vocabulary of the tiny shapes: 512 SentencePiece tokens.
const tinyVocab = "models/stories260K.gguf"

// ShapeNamed finds a shape by name.
func ShapeNamed(name string) (Shape, error) {
	var names []string
	for _, s := range Shapes() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Shape{}, fmt.Errorf("unknown shape %q: want one of %s", name, strings.Join(names, ", "))
}
