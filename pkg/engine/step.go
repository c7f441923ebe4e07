package engine

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// step runs one batch: every decoding sequence feeds its last token, and
// prefilling sequences share the chunk budget oldest first. A returned error
// is an executor failure (the model is poisoned).
func (s *scheduler) step() error {
	batch, seqs, prefill, decode := s.buildBatch()
	s.compact() // sequences that failed while building
	if len(batch) == 0 {
		return nil
	}
	start := time.Now()
	for _, q := range seqs {
		if q.started.IsZero() {
			q.started = start
		}
	}
	results, err := s.runStep(batch)
	if err != nil {
		return err
	}
	if len(results) != len(batch) {
		return fmt.Errorf("%w: step returned %d results for a batch of %d", executor.ErrDevice, len(results), len(batch))
	}
	s.counters.step(prefill, decode, time.Since(start))
	for i, res := range results {
		s.apply(seqs[i], batch[i], res)
	}
	s.compact()
	return nil
}

// runStep calls the executor, turning a panic into an executor failure.
func (s *scheduler) runStep(batch []executor.Work) (results []executor.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: panic in step: %v\n%s", executor.ErrDevice, p, debug.Stack())
		}
	}()
	return s.exec.Step(s.ctx, batch)
}

func (s *scheduler) buildBatch() (batch []executor.Work, seqs []*sequence, prefill, decode int) {
	budget := s.cfg.ChunkSize
	if s.win != nil {
		budget = s.win.chunk
	}
	for _, q := range s.running {
		n := len(q.tokens) - q.computed
		isPrefill := q.computed < q.promptLen
		if isPrefill {
			if budget == 0 {
				continue
			}
			n = s.capAtSnapshot(q, min(n, budget))
			budget -= n
		}
		if !s.ensureBlocks(q, q.computed+n) {
			continue
		}
		w := executor.Work{
			Seq:       q.eid,
			Tokens:    q.tokens[q.computed : q.computed+n],
			Pos:       q.computed,
			Blocks:    q.blocks,
			WinBlocks: q.wblocks,
			History:   q.history,
			Sample:    q.computed+n == len(q.tokens),
		}
		s.planSnapshot(q, &w)
		if q.req.embed != executor.EmbedNone {
			w.Sample = false
			w.Embed, w.EmbedFinal = q.req.embed, q.computed+n == len(q.tokens)
		}
		q.history = nil
		if w.Sample {
			w.TopLogprobs = q.req.opts.TopLogprobs
			w.SkipLogprob = !q.req.opts.Logprobs && q.req.opts.TopLogprobs == 0
			if !s.constrain(q, &w) {
				continue
			}
		}
		if isPrefill {
			prefill += n
		} else {
			decode += n
		}
		batch = append(batch, w)
		seqs = append(seqs, q)
	}
	if s.snaps != nil && len(batch) > 0 {
		batch[0].DropStates = s.snaps.takeDrops()
	}
	return batch, seqs, prefill, decode
}

// capAtSnapshot ends a prefill chunk at the boundary where q's state
// snapshot is to be taken.
func (s *scheduler) capAtSnapshot(q *sequence, n int) int {
	if q.snapAt > q.computed {
		return min(n, q.snapAt-q.computed)
	}
	return n
}

// planSnapshot has w restore the snapshot q resumes from (its first work)
// and save q's state when w ends at q's snapshot boundary.
func (s *scheduler) planSnapshot(q *sequence, w *executor.Work) {
	if s.snaps == nil {
		return
	}
	if q.load != nil && q.computed == q.cached {
		w.LoadState = q.load.key
	}
	if q.snapAt > 0 && q.computed+len(w.Tokens) == q.snapAt && q.saving == 0 {
		if key := s.snaps.add(q.snapHash, q.snapAt); key != 0 {
			w.SaveState, q.saving = key, key
		} else {
			q.snapAt = 0
		}
	}
}

// ensureBlocks grows q's block table to cover n positions (in ascending
// order: blockPool.extend).
func (s *scheduler) ensureBlocks(q *sequence, n int) bool {
	var ok bool
	if q.blocks, ok = s.pool.extend(q.blocks, blocksFor(n, s.info.BlockSize), &q.reserve); !ok {
		s.finish(q, "", Errorf(KindNoMemory, "the KV cache of model %q ran out of blocks", s.name))
		return false
	}
	if s.win != nil && !s.win.grow(q, n) {
		s.finish(q, "", Errorf(KindNoMemory, "the sliding-window KV store of model %q ran out of blocks", s.name))
		return false
	}
	return true
}

// constrain sets the JSON-mode token mask for a sampling step.
func (s *scheduler) constrain(q *sequence, w *executor.Work) bool {
	st := q.req.gen.json
	if st == nil {
		return true
	}
	left := q.maxTotal - len(q.tokens)
	if q.req.opts.MaxTokens > 0 {
		left = min(left, q.req.opts.MaxTokens-q.req.gen.generated)
	}
	// Keep the object closable within the tokens left after this one.
	var mask []uint64
	var ok, cut bool
	err := guard("JSON mode", func() error {
		s.loadVocabText()
		mask = make([]uint64, (len(s.vocabText)+63)/64)
		ok, cut = jsonMaskBudget(st, s.vocabText, left-1, mask)
		if !ok {
			ok, cut = jsonMask(st, s.vocabText, -1, mask), false
		}
		return nil
	})
	if err != nil {
		s.finish(q, "", err)
		return false
	}
	if !ok {
		s.finish(q, "", Errorf(KindInternal, "JSON mode: no token of model %q can continue the JSON object", s.name))
		return false
	}
	w.Allowed = mask
	q.req.gen.budgetCut = cut
	return true
}

// loadVocabText caches every token's text; end-of-generation and control
// tokens (no text) are never allowed in JSON mode.
func (s *scheduler) loadVocabText() {
	if s.vocabText != nil {
		return
	}
	tok := s.model.Tokenizer
	n := tok.VocabSize()
	texts := make([][]byte, n) // kept only once whole
	for id := range n {
		if tok.IsEOG(int32(id)) {
			continue
		}
		if t := tok.TokenText(int32(id)); t != "" {
			texts[id] = []byte(t)
		}
	}
	s.vocabText = texts
}

// apply takes one sequence's step result.
func (s *scheduler) apply(q *sequence, w executor.Work, res executor.Result) {
	if q.finished {
		return
	}
	if res.Err != nil {
		s.finish(q, "", requestError(res.Err, "step for this request"))
		return
	}
	q.computed += len(w.Tokens)
	s.snapshotDone(q, true)
	s.registerBlocks(q)
	if s.win != nil {
		s.win.slide(q)
	}
	if w.EmbedFinal {
		q.req.embedding = res.Embedding
		s.finish(q, "stop", nil)
		return
	}
	if !w.Sample {
		return
	}
	if q.firstTok.IsZero() {
		q.firstTok = time.Now()
	}
	if w.Allowed != nil && (res.Token < 0 || int(res.Token) >= len(w.Allowed)*64 || w.Allowed[res.Token/64]&(1<<(uint(res.Token)%64)) == 0) {
		s.finish(q, "", Errorf(KindInternal, "JSON mode: the executor sampled token %d outside the allowed set (it does not honour executor.Work.Allowed)", res.Token))
		return
	}
	d, reason, err := s.accept(q, res)
	if d != nil {
		q.req.out.send(event{delta: d})
	}
	switch {
	case err != nil:
		s.finish(q, "", err)
	case reason != "":
		s.finish(q, reason, nil)
	default:
		q.tokens = append(q.tokens, res.Token)
		if len(q.tokens) >= q.maxTotal {
			// The context (or the request's budget) is full.
			var d *Delta
			err := guard("finishing the output", func() error { d = q.req.gen.finish(false); return nil })
			if err != nil {
				s.finish(q, "", err)
				return
			}
			s.deliver(q, d)
			s.finish(q, "length", nil)
		}
	}
}

func (s *scheduler) deliver(q *sequence, d *Delta) {
	if d != nil {
		q.req.out.send(event{delta: d})
	}
}

// accept runs the sequence's generation on a sampled token, turning a
// panic in it into this request's own error.
func (s *scheduler) accept(q *sequence, res executor.Result) (d *Delta, reason string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Errorf(KindInternal, "processing generated token %d failed: %v", res.Token, p)
		}
	}()
	d, reason = q.req.gen.accept(res)
	return d, reason, nil
}

// registerBlocks adds q's newly completed full blocks to the prefix cache.
func (s *scheduler) registerBlocks(q *sequence) {
	bs := s.info.BlockSize
	for len(q.hashes) < q.computed/bs {
		i := len(q.hashes)
		var prev uint64
		if i > 0 {
			prev = q.hashes[i-1]
		}
		chunk := q.tokens[i*bs : (i+1)*bs]
		h := chainHash(prev, chunk)
		s.pool.register(q.blocks[i], h, chunk)
		if s.win != nil && q.wblocks[i] >= 0 {
			s.win.pool.register(q.wblocks[i], h, chunk)
		}
		q.hashes = append(q.hashes, h)
	}
}
