// Package sampling owns token sampling: the per-sequence settings (greedy,
// temperature, top-k, top-p, min-p, penalties, logit bias, seed) and the
// sampler that turns a logits vector into the next token.
package sampling

// Params are one sequence's sampling settings. The zero value is greedy
// decoding with no penalties.
type Params struct {
	// Temperature <= 0 means greedy (argmax, ties to the lowest id).
	Temperature float32 `json:"temperature"`
	TopK        int     `json:"top_k,omitempty"` // 0 = disabled
	TopP        float32 `json:"top_p,omitempty"` // 0 or 1 = disabled
	MinP        float32 `json:"min_p,omitempty"` // 0 = disabled
	// RepeatPenalty divides positive (multiplies negative) logits of tokens
	// seen in the last RepeatLastN tokens; 0 or 1 = disabled.
	RepeatPenalty    float32 `json:"repeat_penalty,omitempty"`
	RepeatLastN      int     `json:"repeat_last_n,omitempty"` // 0 = default 64; -1 = whole context
	PresencePenalty  float32 `json:"presence_penalty,omitempty"`
	FrequencyPenalty float32 `json:"frequency_penalty,omitempty"`
	// LogitBias is added to the logits of the given token ids.
	LogitBias map[int32]float32 `json:"logit_bias,omitempty"`
	// Seed makes sampling reproducible: same seed, same tokens.
	Seed uint64 `json:"seed"`
}

// Greedy reports whether the settings select the argmax token.
func (p Params) Greedy() bool { return p.Temperature <= 0 }
