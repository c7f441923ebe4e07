package sampling

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/helexa/helexa/internal/greedy"
)

// ErrBadLogits marks a logits vector that cannot be sampled: the wrong
// length, or no finite value at all.
var ErrBadLogits = errors.New("cannot sample from logits")

// TokenLogprob is a token id with its log-probability.
type TokenLogprob struct {
	Token   int32   `json:"token"`
	Logprob float32 `json:"logprob"`
}

// cand is one candidate token during sampling.
type cand struct {
	id    int32
	logit float32
}

// better is the total order of candidates: higher logit first, ties to the
// lower id. Every selection and sort uses it, so results are deterministic.
func better(a, b cand) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

// Sampler turns one sequence's logits into tokens. It keeps the sequence's
// token history (for penalties), its seeded random source and scratch
// buffers. It is not safe for concurrent use.
//
// The pipeline is llama.cpp's default order: logit bias, penalties (repeat,
// presence, frequency over the last RepeatLastN tokens), top-k, top-p,
// min-p, temperature, then a draw from the remaining distribution. Greedy
// settings apply bias and penalties and then take the argmax (ties to the
// lowest id).
type Sampler struct {
	p       Params
	nVocab  int
	lastN   int // penalty window; -1 = all history
	err     error
	rng     *rand.Rand
	history []int32
	counts  map[int32]int
	cands   []cand
	heap    []cand
	probs   []float64
	buckets []float64
}

// New returns a sampler for a vocabulary of nVocab tokens. Invalid settings
// (see Params.Validate, or a logit_bias id outside the vocabulary) make every
// Sample call fail with that error.
func New(p Params, nVocab int) *Sampler {
	s := &Sampler{
		p:      p,
		nVocab: nVocab,
		lastN:  p.RepeatLastN,
		err:    p.Validate(),
		rng:    rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15)),
		counts: map[int32]int{},
	}
	if s.lastN == 0 {
		s.lastN = DefaultRepeatLastN
	}
	if s.err == nil && nVocab <= 0 {
		s.err = fmt.Errorf("%w: vocabulary size %d", ErrInvalidParams, nVocab)
	}
	for id := range p.LogitBias {
		if s.err == nil && int(id) >= nVocab {
			s.err = fmt.Errorf("%w: logit_bias token id %d is outside the vocabulary of %d tokens", ErrInvalidParams, id, nVocab)
		}
	}
	return s
}

// Err returns the settings error that makes Sample fail, or nil.
func (s *Sampler) Err() error { return s.err }

// Accept appends tokens to the sequence's history. Feed every token of the
// sequence exactly once (prompt and generated ones): Sample does not record
// the token it returns.
func (s *Sampler) Accept(tokens ...int32) {
	s.history = append(s.history, tokens...)
	if s.lastN > 0 && len(s.history) > 2*s.lastN+1024 {
		n := copy(s.history, s.history[len(s.history)-s.lastN:])
		s.history = s.history[:n]
	}
}

// Sample picks the next token from logits (length nVocab; not modified) and
// returns it with its log-probability under the raw logits (log-softmax at
// temperature 1, before bias and penalties), as OpenAI reports logprobs.
func (s *Sampler) Sample(logits []float32) (token int32, logprob float32, err error) {
	return s.sample(logits, true)
}

// SampleToken picks the same token as Sample (and advances the random state
// the same way) without computing its log-probability, which costs an exp
// over the whole vocabulary.
func (s *Sampler) SampleToken(logits []float32) (int32, error) {
	tok, _, err := s.sample(logits, false)
	return tok, err
}

func (s *Sampler) sample(logits []float32, withLogprob bool) (int32, float32, error) {
	if s.err != nil {
		return 0, 0, s.err
	}
	if len(logits) != s.nVocab {
		return 0, 0, fmt.Errorf("%w: %d logits for a vocabulary of %d", ErrBadLogits, len(logits), s.nVocab)
	}
	best, m, ok := greedy.MaxFinite(logits)
	if !ok {
		return 0, 0, fmt.Errorf("%w: no finite logit among %d (NaN/Inf only: the model's output is broken)", ErrBadLogits, len(logits))
	}
	tok, err := s.pick(logits, best)
	if err != nil || !withLogprob {
		return tok, 0, err
	}
	return tok, rawLogprob(logits[tok], m, sumExpLog(logits, m)), nil
}

// IsArgMax reports whether Sample and SampleToken return the argmax of the
// raw logits, whatever they are and whatever is accepted before (greedy,
// no logit_bias, no penalty configured, no error), so that a caller that
// has the argmax already (a GPU computed it) may take it instead.
func (s *Sampler) IsArgMax() bool {
	return s.err == nil && s.p.Greedy() && len(s.p.LogitBias) == 0 && !s.penaltiesSet()
}

// rawLogprob is the log-softmax of x given the max m and log-sum-exp logZ
// (relative to m) of the raw logits.
func rawLogprob(x, m float32, logZ float64) float32 {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return float32(math.Inf(-1))
	}
	return float32(float64(x-m) - logZ)
}

// pick runs the pipeline and returns the chosen token; best is the argmax
// of the raw logits.
func (s *Sampler) pick(logits []float32, best int32) (int32, error) {
	modified := len(s.p.LogitBias) > 0 || s.penaltiesActive()
	if s.p.Greedy() && !modified {
		return best, nil
	}
	c := s.candidates(logits)
	if len(c) == 0 {
		return 0, fmt.Errorf("%w: every token was excluded by logit_bias or penalties", ErrBadLogits)
	}
	if s.p.Greedy() {
		best := c[0]
		for _, x := range c[1:] {
			if better(x, best) {
				best = x
			}
		}
		return best.id, nil
	}
	c = s.truncate(c)
	return s.draw(c), nil
}

// candidates copies the logits, applies bias and penalties, and drops
// non-finite values. The result is in id order.
func (s *Sampler) candidates(logits []float32) []cand {
	if cap(s.cands) < len(logits) {
		s.cands = make([]cand, len(logits))
	}
	c := s.cands[:len(logits)]
	for i, x := range logits {
		c[i] = cand{id: int32(i), logit: x}
	}
	for id, b := range s.p.LogitBias {
		c[id].logit += b
	}
	s.applyPenalties(c)
	n := 0
	for _, x := range c {
		if !math.IsNaN(float64(x.logit)) && !math.IsInf(float64(x.logit), 0) {
			c[n] = x
			n++
		}
	}
	return c[:n]
}

func (s *Sampler) penaltiesActive() bool { return len(s.history) > 0 && s.penaltiesSet() }

// penaltiesSet reports whether any penalty is configured (it acts once
// there is history).
func (s *Sampler) penaltiesSet() bool {
	rep := s.p.RepeatPenalty != 0 && s.p.RepeatPenalty != 1
	return rep || s.p.PresencePenalty != 0 || s.p.FrequencyPenalty != 0
}

// applyPenalties applies the repeat penalty (llama.cpp: divide positive
// logits, multiply negative ones) and OpenAI's presence and frequency
// penalties (logit -= count*frequency + presence) for the tokens in the
// window. c must be indexed by id.
func (s *Sampler) applyPenalties(c []cand) {
	if !s.penaltiesActive() {
		return
	}
	window := s.history
	if s.lastN > 0 && len(window) > s.lastN {
		window = window[len(window)-s.lastN:]
	}
	clear(s.counts)
	for _, t := range window {
		if t >= 0 && int(t) < len(c) {
			s.counts[t]++
		}
	}
	rep := s.p.RepeatPenalty
	for t, n := range s.counts {
		l := c[t].logit
		if rep != 0 && rep != 1 {
			if l <= 0 {
				l *= rep
			} else {
				l /= rep
			}
		}
		l -= float32(n)*s.p.FrequencyPenalty + s.p.PresencePenalty
		c[t].logit = l
	}
}

// sumExpLog returns log(sum(exp(x-m))) over the finite values of x, given
// their maximum m.
func sumExpLog(x []float32, m float32) float64 {
	var sum float64
	for _, v := range x {
		if v > m-expCutoff && v <= m {
			sum += math.Exp(float64(v - m))
		}
	}
	return math.Log(sum)
}

// expCutoff: logits more than this far below the max contribute less than
// e^-40 each, which is invisible even summed over millions of tokens.
const expCutoff = 40
