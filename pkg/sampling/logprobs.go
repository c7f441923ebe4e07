package sampling

import (
	"math"

	"github.com/helexa/helexa/internal/greedy"
)

// TopLogprobs returns the n most likely tokens under the raw logits (ties to
// the lower id), best first, with their log-softmax at temperature 1. It
// returns nil when n <= 0 or the logits have no finite value; it does not
// touch the sampler's random state or history.
func (s *Sampler) TopLogprobs(logits []float32, n int) []TokenLogprob {
	if n <= 0 {
		return nil
	}
	_, m, ok := greedy.MaxFinite(logits)
	if !ok {
		return nil
	}
	logZ := sumExpLog(logits, m)
	if cap(s.cands) < len(logits) {
		s.cands = make([]cand, len(logits))
	}
	c := s.cands[:0]
	for i, x := range logits {
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			c = append(c, cand{id: int32(i), logit: x})
		}
	}
	if n < len(c) {
		c = s.topK(c, n)
	} else {
		sortCands(c)
	}
	out := make([]TokenLogprob, len(c))
	for i, x := range c {
		out[i] = TokenLogprob{Token: x.id, Logprob: rawLogprob(x.logit, m, logZ)}
	}
	return out
}
