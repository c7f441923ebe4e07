package executor

import (
	"github.com/helexa/helexa/pkg/sampling"
)

// seqSampler is what the executor needs from a sequence's sampler.
type seqSampler interface {
	Accept(tokens ...int32)
	Sample(logits []float32) (int32, float32, error)
	TopLogprobs(logits []float32, n int) []sampling.TokenLogprob
}

// seqState is one sequence's executor-side state.
type seqState struct {
	sampler seqSampler
	primed  bool // History was fed to the sampler
}

// topLogprobs converts the sampler's top tokens to the seam's type.
func topLogprobs(s seqSampler, logits []float32, n int) []TokenLogprob {
	top := s.TopLogprobs(logits, n)
	out := make([]TokenLogprob, len(top))
	for i, t := range top {
		out[i] = TokenLogprob{Token: t.Token, Logprob: t.Logprob}
	}
	return out
}
