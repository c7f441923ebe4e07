package local

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
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
	IsArgMax() bool
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

// argMaxOnly reports whether w's token is the argmax of its logits and
// nothing else of them is wanted, so that the backend finds the argmax
// where the logits are (compute.Backend.ArgMaxRows), sparing reading them.
func (l *Executor) argMaxOnly(w *executor.Work) bool {
	return w.Sample && w.SkipLogprob && w.Allowed == nil && w.TopLogprobs == 0 && w.Logits == executor.LogitsNone &&
		isArgMax(l.seqs[w.Seq].sampler)
}

// isArgMax asks s whether it picks the argmax. A sampler that panics (a
// bug) answers no here, outside any one sequence's recovery, and fails only
// its own sequence when finish samples with it.
func isArgMax(s seqSampler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.IsArgMax()
}

// argMaxRows fills in the greedy tokens of the logits rows that need
// nothing else (wants[i] for i in idx) from the backend's argmax; a row
// without a finite logit has its logits read instead, for the sampler to
// report.
func (l *Executor) argMaxRows(logits compute.Tensor, idx []int32, works []int, outs []workOut) error {
	toks := make([]int32, len(idx))
	if err := l.be.ArgMaxRows(logits, idx, toks); err != nil {
		return fmt.Errorf("%w: greedy tokens: %w", executor.ErrDevice, err)
	}
	for k, tok := range toks {
		o := &outs[works[k]]
		if tok >= 0 {
			o.token, o.hasToken = tok, true
			continue
		}
		o.last = make([]float32, l.model.HP.NVocab)
		if err := l.be.ReadRow(logits, int(idx[k]), o.last); err != nil {
			return fmt.Errorf("%w: reading logits: %w", executor.ErrDevice, err)
		}
	}
	return nil
}
