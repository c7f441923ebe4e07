// Package sampling owns token sampling: the per-sequence settings (greedy,
// temperature, top-k, top-p, min-p, penalties, logit bias, seed) and the
// sampler that turns a logits vector into the next token.
package sampling

import (
	"errors"
	"fmt"
	"math"
)

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

// DefaultRepeatLastN is the penalty window used when RepeatLastN is 0.
const DefaultRepeatLastN = 64

// Validate reports settings no sampler can honour, with a message that names
// the field and its valid range.
func (p Params) Validate() error {
	if !finite32(p.Temperature) {
		return fmt.Errorf("%w: temperature %v is not a finite number", ErrInvalidParams, p.Temperature)
	}
	if p.TopK < 0 {
		return fmt.Errorf("%w: top_k %d is negative (0 disables it)", ErrInvalidParams, p.TopK)
	}
	if !finite32(p.TopP) || p.TopP < 0 || p.TopP > 1 {
		return fmt.Errorf("%w: top_p %v is outside [0, 1]", ErrInvalidParams, p.TopP)
	}
	if !finite32(p.MinP) || p.MinP < 0 || p.MinP > 1 {
		return fmt.Errorf("%w: min_p %v is outside [0, 1]", ErrInvalidParams, p.MinP)
	}
	if !finite32(p.RepeatPenalty) || p.RepeatPenalty < 0 {
		return fmt.Errorf("%w: repeat_penalty %v must be a finite number >= 0 (0 or 1 disables it)", ErrInvalidParams, p.RepeatPenalty)
	}
	if p.RepeatLastN < -1 {
		return fmt.Errorf("%w: repeat_last_n %d must be >= -1 (-1 = whole context, 0 = default %d)", ErrInvalidParams, p.RepeatLastN, DefaultRepeatLastN)
	}
	if !finite32(p.PresencePenalty) || !finite32(p.FrequencyPenalty) {
		return fmt.Errorf("%w: presence_penalty %v and frequency_penalty %v must be finite numbers", ErrInvalidParams, p.PresencePenalty, p.FrequencyPenalty)
	}
	for id, b := range p.LogitBias {
		if id < 0 {
			return fmt.Errorf("%w: logit_bias token id %d is negative", ErrInvalidParams, id)
		}
		if math.IsNaN(float64(b)) || math.IsInf(float64(b), 1) {
			return fmt.Errorf("%w: logit_bias for token %d is %v (use a finite number, or -Inf to ban the token)", ErrInvalidParams, id, b)
		}
	}
	return nil
}

// ErrInvalidParams marks sampling settings that are out of range.
var ErrInvalidParams = errors.New("invalid sampling parameters")

func finite32(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}
