package local

import (
	"fmt"
	"math"
)

// maskWords is the length of a Work.Allowed bitset over nVocab tokens.
func maskWords(nVocab int) int { return (nVocab + 63) / 64 }

// allowed reports whether token id is set in the bitset.
func allowed(mask []uint64, id int) bool { return mask[id>>6]&(1<<(uint(id)&63)) != 0 }

// checkMask validates a Work.Allowed bitset (nil means no constraint): it
// must have one bit per vocabulary token, rounded up to whole words, and
// allow at least one token of the vocabulary.
func checkMask(mask []uint64, nVocab int) error {
	if mask == nil {
		return nil
	}
	if want := maskWords(nVocab); len(mask) != want {
		return fmt.Errorf("token mask of %d words, want %d for a vocabulary of %d tokens", len(mask), want, nVocab)
	}
	for id := 0; id < nVocab; id++ {
		if mask[id>>6] == 0 {
			id |= 63 // skip the empty word
			continue
		}
		if allowed(mask, id) {
			return nil
		}
	}
	return fmt.Errorf("token mask allows no token of the vocabulary of %d", nVocab)
}

// applyMask copies logits into dst (grown as needed) with every token that
// mask does not allow set to -Inf, and returns dst. The caller checked the
// mask with checkMask.
func applyMask(dst, logits []float32, mask []uint64) []float32 {
	dst = append(dst[:0], logits...)
	negInf := float32(math.Inf(-1))
	for i, word := range mask {
		if word == ^uint64(0) {
			continue
		}
		hi := min(len(dst), (i+1)*64)
		for id := i * 64; id < hi; id++ {
			if word&(1<<(uint(id)&63)) == 0 {
				dst[id] = negInf
			}
		}
	}
	return dst
}

// rawLogprob is token tok's log-softmax over the raw (unconstrained) logits,
// computed as the sampler reports logprobs: relative to the largest finite
// logit, summing only the terms within expCutoff of it. Work.Allowed
// constrains which token is drawn, not the probabilities reported.
func rawLogprob(logits []float32, tok int32) float32 {
	const expCutoff = 40
	m := float32(math.Inf(-1))
	for _, v := range logits {
		if v > m && !math.IsInf(float64(v), 1) {
			m = v
		}
	}
	x := logits[tok]
	if math.IsInf(float64(m), -1) || math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return float32(math.Inf(-1))
	}
	var sum float64
	for _, v := range logits {
		if v > m-expCutoff && v <= m {
			sum += math.Exp(float64(v - m))
		}
	}
	return float32(float64(x-m) - math.Log(sum))
}
