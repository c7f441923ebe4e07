package arch

import (
	"errors"
	"fmt"
)

// Upper bounds on a model's hyperparameters, checked before anything is
// sized from them: a model file is untrusted input, and a layer count of a
// billion would otherwise allocate gigabytes before a tensor is looked at.
// Each is far above any released model.
const (
	MaxLayers  = 1 << 12 // layers (the largest models have under 200)
	MaxHeads   = 1 << 12 // attention (and key/value, linear-attention) heads
	MaxWidth   = 1 << 20 // hidden, feed-forward and head widths
	MaxVocab   = 1 << 24 // vocabulary entries
	MaxContext = 1 << 24 // positions (training context, sliding window)
	MaxExperts = 1 << 12 // experts, and experts used per token
)

// ErrOutOfRange marks a hyperparameter outside its limit.
var ErrOutOfRange = errors.New("hyperparameter out of range")

// LimitError reports a hyperparameter (a config.json or GGUF metadata key)
// outside its range.
type LimitError struct {
	Source string // "config.json", or the GGUF architecture
	Key    string
	Value  int64
	Limit  int64
}

func (e *LimitError) Error() string {
	if e.Value <= 0 {
		return fmt.Sprintf("%s: %s = %d, want a positive value (at most %d)", e.Source, e.Key, e.Value, e.Limit)
	}
	return fmt.Sprintf("%s: %s = %d exceeds the limit of %d", e.Source, e.Key, e.Value, e.Limit)
}

// Unwrap lets errors.Is(err, ErrOutOfRange) match.
func (e *LimitError) Unwrap() error { return ErrOutOfRange }

// ggufLimits bounds GGUF metadata keys (after the "<arch>." prefix).
var ggufLimits = map[string]int{
	"block_count":                          MaxLayers,
	"embedding_length":                     MaxWidth,
	"attention.head_count":                 MaxHeads,
	"attention.head_count_kv":              MaxHeads,
	"attention.key_length":                 MaxWidth,
	"attention.value_length":               MaxWidth,
	"rope.dimension_count":                 MaxWidth,
	"context_length":                       MaxContext,
	"rope.scaling.original_context_length": MaxContext,
	"attention.sliding_window":             MaxContext,
	"attention.sliding_window_pattern":     MaxLayers,
	"full_attention_interval":              MaxLayers,
	"nextn_predict_layers":                 MaxLayers,
	"expert_count":                         MaxExperts,
	"expert_used_count":                    MaxExperts,
	"ssm.time_step_rank":                   MaxHeads,
	"ssm.group_count":                      MaxHeads,
	"ssm.inner_size":                       MaxWidth,
	"ssm.state_size":                       MaxWidth,
	"ssm.conv_kernel":                      MaxWidth,
}

// ggufLimit is the bound of a GGUF key without its architecture prefix
// (1<<31 for keys without their own).
func ggufLimit(name string) int {
	if l, ok := ggufLimits[name]; ok {
		return l
	}
	return 1 << 31
}

// checkHFLimits range-checks every size config.json gives, before any is
// used: none may be negative or exceed its limit, and with required the
// core ones (hidden size, layers, heads, context) must be positive.
func (c *HFConfig) checkHFLimits(required bool) error {
	for _, f := range []struct {
		key      string
		v, limit int
		required bool
	}{
		{"hidden_size", c.HiddenSize, MaxWidth, true},
		{"num_hidden_layers", c.NumHiddenLayers, MaxLayers, true},
		{"num_attention_heads", c.NumAttentionHeads, MaxHeads, true},
		{"max_position_embeddings", c.MaxPositionEmbeddings, MaxContext, true},
		{"num_key_value_heads", c.NumKeyValueHeads, MaxHeads, false},
		{"head_dim", c.HeadDim, MaxWidth, false},
		{"intermediate_size", c.IntermediateSize, MaxWidth, false},
		{"moe_intermediate_size", c.MoEIntermediateSize, MaxWidth, false},
		{"num_experts", c.NumExperts, MaxExperts, false},
		{"num_experts_per_tok", c.NumExpertsPerTok, MaxExperts, false},
		{"decoder_sparse_step", c.DecoderSparseStep, MaxLayers, false},
		{"vocab_size", c.VocabSize, MaxVocab, false},
		{"linear_conv_kernel_dim", c.LinearConvKernelDim, MaxWidth, false},
		{"linear_key_head_dim", c.LinearKeyHeadDim, MaxWidth, false},
		{"linear_value_head_dim", c.LinearValueHeadDim, MaxWidth, false},
		{"linear_num_key_heads", c.LinearNumKeyHeads, MaxHeads, false},
		{"linear_num_value_heads", c.LinearNumValueHeads, MaxHeads, false},
		{"full_attention_interval", c.FullAttentionInterval, MaxLayers, false},
	} {
		if f.v > f.limit || f.v < 0 || (required && f.required && f.v == 0) {
			return &LimitError{Source: "config.json", Key: f.key, Value: int64(f.v), Limit: int64(f.limit)}
		}
	}
	if rs := c.RopeScaling; rs != nil && (rs.OriginalMaxPositionEmbeddings < 0 || rs.OriginalMaxPositionEmbeddings > MaxContext) {
		return &LimitError{Source: "config.json", Key: "rope_scaling.original_max_position_embeddings",
			Value: int64(rs.OriginalMaxPositionEmbeddings), Limit: MaxContext}
	}
	if len(c.LayerTypes) > MaxLayers || len(c.MLPOnlyLayers) > MaxLayers {
		return &LimitError{Source: "config.json", Key: "layer_types", Value: int64(max(len(c.LayerTypes), len(c.MLPOnlyLayers))), Limit: MaxLayers}
	}
	return nil
}
