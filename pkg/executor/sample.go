package executor

import (
	"math"
	"sort"

	"github.com/helexa/helexa/pkg/sampling"
)

// seqSampler is what the executor needs from a sequence's sampler.
type seqSampler interface {
	Accept(tokens ...int32)
	Sample(logits []float32) (int32, float32, error)
}

// seqState is one sequence's executor-side state.
type seqState struct {
	sampler seqSampler
	primed  bool // History was fed to the sampler
}

func newSampler(p sampling.Params, nVocab int) seqSampler {
	return greedySampler{}
}

// greedySampler picks the argmax (ties to the lowest id).
type greedySampler struct{}

func (greedySampler) Accept(...int32) {}

func (greedySampler) Sample(logits []float32) (int32, float32, error) {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best), logSoftmaxAt(logits, best), nil
}

func logSoftmaxAt(logits []float32, i int) float32 {
	m := logits[0]
	for _, v := range logits {
		m = max(m, v)
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v - m))
	}
	return float32(float64(logits[i]-m) - math.Log(sum))
}

// topLogprobs returns the n most likely tokens with their log-probabilities.
func topLogprobs(logits []float32, n int) []TokenLogprob {
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	n = min(n, len(idx))
	out := make([]TokenLogprob, n)
	for i := 0; i < n; i++ {
		out[i] = TokenLogprob{Token: int32(idx[i]), Logprob: logSoftmaxAt(logits, idx[i])}
	}
	return out
}
