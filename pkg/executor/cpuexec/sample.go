package cpuexec

import (
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/sampling"
)

// seqSampler is what the executor needs from a sequence's sampler.
type seqSampler interface {
	Accept(tokens ...int32)
	Sample(logits []float32) (int32, float32, error)
	SampleToken(logits []float32) (int32, error)
	TopLogprobs(logits []float32, n int) []sampling.TokenLogprob
}

// seqState is one sequence's executor-side state.
type seqState struct {
	sampler seqSampler
	primed  bool // History was fed to the sampler
	// embSum and embN accumulate the hidden states of an embedding's
	// tokens (Work.Embed) until the final work.
	embSum []float64
	embN   int
	// rec is the recurrent state of a model with recurrent layers.
	rec *arch.State
}

// sampleWork draws w's next token from logits (the raw logits after its
// last token) and, unless w.SkipLogprob, the token's log-probability under
// the raw logits. With a token mask the token is drawn from the masked
// logits while the logprob stays on the raw ones.
func (l *Executor) sampleWork(s seqSampler, w *executor.Work, logits []float32) (int32, float32, error) {
	if w.Allowed == nil && !w.SkipLogprob {
		return s.Sample(logits)
	}
	from := logits
	if w.Allowed != nil {
		l.masked = applyMask(l.masked, logits, w.Allowed)
		from = l.masked
	}
	tok, err := s.SampleToken(from)
	if err != nil || w.SkipLogprob {
		return tok, 0, err
	}
	return tok, rawLogprob(logits, tok), nil
}

// topLogprobs converts the sampler's top tokens to the seam's type.
func topLogprobs(s seqSampler, logits []float32, n int) []executor.TokenLogprob {
	top := s.TopLogprobs(logits, n)
	out := make([]executor.TokenLogprob, len(top))
	for i, t := range top {
		out[i] = executor.TokenLogprob{Token: t.Token, Logprob: t.Logprob}
	}
	return out
}
