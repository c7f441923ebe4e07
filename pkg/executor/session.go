package executor

import (
	"context"
	"fmt"

	"github.com/helexa/helexa/pkg/sampling"
)

// Session is a single-sequence convenience over an Executor for debug
// commands and tests: it owns the KV blocks [first, first+n) linearly and
// feeds them with every step. For a model with a sliding-window store it
// owns a matching share of that store's blocks and uses them as a ring
// (table entry i is block i modulo its share), which holds while the share
// covers a window plus one of the executor's passes. Do not mix a Session
// with a scheduler that hands out the same blocks.
type Session struct {
	// NoLogprob leaves Result.Logprob 0 (Work.SkipLogprob), sparing a
	// log-sum-exp over the vocabulary per sampled token.
	NoLogprob bool

	ex     Executor
	seq    SeqID
	blocks []int32
	first  int
	limit  int // blocks the session may use
	bs     int
	pos    int
	// the window store's ring: table, first block, blocks (0: no store)
	win              []int32
	winFirst, winLen int
}

// NewSession allocates a sequence on ex whose KV lives in blocks [0, ...).
func NewSession(ex Executor, p sampling.Params) (*Session, error) {
	return NewSessionAt(ex, p, 0, ex.Info().NumBlocks)
}

// NewSessionAt allocates a sequence whose KV lives in the numBlocks blocks
// starting at first.
func NewSessionAt(ex Executor, p sampling.Params, first, numBlocks int) (*Session, error) {
	info := ex.Info()
	if first < 0 || numBlocks <= 0 || first+numBlocks > info.NumBlocks {
		return nil, fmt.Errorf("session blocks [%d, %d) outside the pool of %d", first, first+numBlocks, info.NumBlocks)
	}
	id, err := ex.NewSeq(p)
	if err != nil {
		return nil, err
	}
	s := &Session{ex: ex, seq: id, first: first, limit: numBlocks, bs: info.BlockSize}
	if info.Window > 0 {
		// the same share of the window store as of the full one
		s.winFirst = first * info.WinNumBlocks / info.NumBlocks
		s.winLen = (first+numBlocks)*info.WinNumBlocks/info.NumBlocks - s.winFirst
		if s.winLen <= 0 {
			ex.FreeSeq(id)
			return nil, fmt.Errorf("session blocks [%d, %d) get no blocks of the %d-block window store", first, first+numBlocks, info.WinNumBlocks)
		}
	}
	return s, nil
}

// Pos is the number of tokens fed so far.
func (s *Session) Pos() int { return s.pos }

// Prefill feeds tokens and samples the next token; mode selects the logits
// returned.
func (s *Session) Prefill(ctx context.Context, tokens []int32, mode LogitsMode) (Result, error) {
	need := (s.pos + len(tokens) + s.bs - 1) / s.bs
	if need > s.limit {
		return Result{}, fmt.Errorf("%w: %d tokens exceed the session's %d KV positions", ErrBadRequest, s.pos+len(tokens), s.limit*s.bs)
	}
	for len(s.blocks) < need {
		s.blocks = append(s.blocks, int32(s.first+len(s.blocks)))
	}
	for s.winLen > 0 && len(s.win) < need {
		s.win = append(s.win, int32(s.winFirst+len(s.win)%s.winLen))
	}
	res, err := s.ex.Step(ctx, []Work{{Seq: s.seq, Tokens: tokens, Pos: s.pos, Blocks: s.blocks, WinBlocks: s.win, Sample: true,
		SkipLogprob: s.NoLogprob, Logits: mode}})
	if err != nil {
		return Result{}, err
	}
	if res[0].Err != nil {
		return res[0], res[0].Err
	}
	s.pos += len(tokens)
	return res[0], nil
}

// Decode feeds one token and samples the next, returning the logits after
// it.
func (s *Session) Decode(ctx context.Context, token int32) (Result, error) {
	return s.Prefill(ctx, []int32{token}, LogitsLast)
}

// Generate feeds the prompt and then n-1 sampled tokens, returning the n
// sampled tokens (no stop condition). It never computes logprobs.
func (s *Session) Generate(ctx context.Context, prompt []int32, n int) ([]int32, error) {
	if n <= 0 {
		return nil, nil
	}
	defer func(keep bool) { s.NoLogprob = keep }(s.NoLogprob)
	s.NoLogprob = true
	res, err := s.Prefill(ctx, prompt, LogitsNone)
	if err != nil {
		return nil, err
	}
	out := []int32{res.Token}
	for len(out) < n {
		if res, err = s.Prefill(ctx, []int32{res.Token}, LogitsNone); err != nil {
			return out, err
		}
		out = append(out, res.Token)
	}
	return out, nil
}

// Close frees the sequence.
func (s *Session) Close() { s.ex.FreeSeq(s.seq) }
