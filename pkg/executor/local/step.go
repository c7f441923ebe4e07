package local

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/arch"
)

// piece is a contiguous run of one work's tokens inside one forward pass.
type piece struct {
	work, start, n int
}

// workOut collects one work's logits over its pieces.
type workOut struct {
	rows      [][]float32 // LogitsAll: one vector per token
	last      []float32   // the logits after the last token, when needed
	token     int32       // the greedy token the backend found (hasToken)
	hasToken  bool
	embedding []float32 // Work.Embed with EmbedFinal
}

// Step implements Executor. Works with more than ChunkSize tokens are split
// over several forward passes, and each pass runs at most ChunkSize tokens
// of all works together.
func (l *Executor) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	if l.closed {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p, ok := l.be.(compute.PinnedBackend); ok {
		var results []executor.Result
		var err error
		p.Pinned(func() { results, err = l.step(batch) })
		return results, err
	}
	return l.step(batch)
}

// step is Step on the backend's own thread (compute.PinnedBackend).
func (l *Executor) step(batch []executor.Work) ([]executor.Result, error) {
	l.dropStates(batch)
	results := make([]executor.Result, len(batch))
	ok := make([]bool, len(batch))
	seen := map[executor.SeqID]bool{}
	for i := range batch {
		results[i].Seq = batch[i].Seq
		if err := l.check(&batch[i], seen); err != nil {
			results[i].Err = executor.Errorf(executor.KindBadRequest, "bad request: sequence %d: %v", batch[i].Seq, err)
			continue
		}
		if err := l.restoreState(&batch[i]); err != nil {
			return nil, fmt.Errorf("%w: %w", executor.ErrDevice, err)
		}
		ok[i] = true
	}
	outs := make([]workOut, len(batch))
	for _, pass := range planPasses(batch, ok, l.opts.ChunkSize) {
		if err := l.runPass(batch, pass, outs); err != nil {
			return nil, err
		}
	}
	for i := range batch {
		if ok[i] {
			if err := l.saveState(&batch[i]); err != nil {
				return nil, fmt.Errorf("%w: saving a state snapshot: %w", executor.ErrDevice, err)
			}
			l.finish(&batch[i], &outs[i], &results[i])
		}
	}
	return results, nil
}

// Check reports, for each work of a batch, why Step would refuse it (nil
// for the works it would run).
func (l *Executor) Check(batch []executor.Work) []error {
	errs := make([]error, len(batch))
	seen := map[executor.SeqID]bool{}
	for i := range batch {
		errs[i] = l.check(&batch[i], seen)
	}
	return errs
}

// check validates one work against the model and the KV pool.
func (l *Executor) check(w *executor.Work, seen map[executor.SeqID]bool) error {
	if _, ok := l.seqs[w.Seq]; !ok {
		return fmt.Errorf("unknown sequence (allocate it with NewSeq)")
	}
	if seen[w.Seq] {
		return fmt.Errorf("sequence appears twice in one step")
	}
	seen[w.Seq] = true
	if len(w.Tokens) == 0 {
		return fmt.Errorf("no tokens to process")
	}
	if w.Pos < 0 {
		return fmt.Errorf("negative position %d", w.Pos)
	}
	for _, t := range w.Tokens {
		if t < 0 || int(t) >= l.model.HP.NVocab {
			return fmt.Errorf("token %d out of the vocabulary [0, %d)", t, l.model.HP.NVocab)
		}
	}
	if w.TopLogprobs < 0 {
		return fmt.Errorf("negative TopLogprobs %d", w.TopLogprobs)
	}
	if err := checkMask(w.Allowed, l.model.HP.NVocab); err != nil {
		return err
	}
	if err := l.kv.Shape().CheckSpan(compute.SeqSpan{Pos: w.Pos, N: len(w.Tokens), Blocks: w.Blocks}); err != nil {
		return err
	}
	if l.win != nil {
		if err := l.win.Shape().CheckWindowSpan(compute.SeqSpan{Pos: w.Pos, N: len(w.Tokens), Blocks: w.WinBlocks}, l.info.Window); err != nil {
			return err
		}
	}
	return l.checkStateRefs(w)
}

// needsLast reports whether a work needs the logits after its last token.
func needsLast(w *executor.Work) bool {
	return w.Sample || w.TopLogprobs > 0 || w.Logits == executor.LogitsLast
}

// planPasses packs the valid works' tokens into passes of at most chunk
// tokens, in order; a work appears at most once per pass.
func planPasses(batch []executor.Work, ok []bool, chunk int) [][]piece {
	var passes [][]piece
	var cur []piece
	used := 0
	for i := range batch {
		if !ok[i] {
			continue
		}
		for start := 0; start < len(batch[i].Tokens); {
			n := min(len(batch[i].Tokens)-start, chunk-used)
			cur = append(cur, piece{work: i, start: start, n: n})
			start += n
			used += n
			if used == chunk {
				passes = append(passes, cur)
				cur, used = nil, 0
			}
		}
	}
	if len(cur) > 0 {
		passes = append(passes, cur)
	}
	return passes
}

// runPass runs one forward pass. A panic inside the model is a device
// failure: the KV pool may be half-written.
func (l *Executor) runPass(batch []executor.Work, pass []piece, outs []workOut) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic in forward pass: %v\n%s", executor.ErrDevice, r, debug.Stack())
		}
	}()
	var b arch.Batch
	var rowSeq []executor.SeqID
	type want struct {
		work int
		all  bool
	}
	var wants []want
	var hidden []hiddenWant
	for _, p := range pass {
		w := &batch[p.work]
		row := len(b.Tokens)
		hidden = planHidden(&b, hidden, w, p, row)
		b.Spans = append(b.Spans, compute.SeqSpan{Row: row, N: p.n, Pos: w.Pos + p.start, Blocks: w.Blocks})
		if l.win != nil {
			b.WinSpans = append(b.WinSpans, compute.SeqSpan{Row: row, N: p.n, Pos: w.Pos + p.start, Blocks: w.WinBlocks})
		}
		if rec := l.seqs[w.Seq].rec; rec != nil {
			b.States = append(b.States, rec)
		}
		for i := 0; i < p.n; i++ {
			b.Tokens = append(b.Tokens, w.Tokens[p.start+i])
			b.Pos = append(b.Pos, int32(w.Pos+p.start+i))
			rowSeq = append(rowSeq, w.Seq)
			if w.Logits == executor.LogitsAll {
				b.LogitRows = append(b.LogitRows, row+i)
				wants = append(wants, want{p.work, true})
			}
		}
		if w.Logits != executor.LogitsAll && p.start+p.n == len(w.Tokens) && needsLast(w) {
			b.LogitRows = append(b.LogitRows, row+p.n-1)
			wants = append(wants, want{p.work, false})
		}
	}
	var hook arch.RoutingHook
	if l.opts.Routing != nil {
		hook = func(row, layer int, experts []int32, probs []float32) {
			l.opts.Routing(rowSeq[row], int(b.Pos[row]), layer, experts, probs)
		}
	}
	fwd, err := l.model.Forward(l.be, arch.Caches{Full: l.kv, Window: l.win}, &b, &l.scratch, hook)
	if err != nil {
		return fmt.Errorf("%w: %w", executor.ErrDevice, err)
	}
	if err := l.poolHidden(batch, fwd.Hidden, hidden, outs); err != nil {
		return err
	}
	logits := fwd.Logits
	nv := l.model.HP.NVocab
	var argIdx []int32
	var argWorks []int
	for i, wt := range wants {
		if !wt.all && l.argMaxOnly(&batch[wt.work]) {
			argIdx, argWorks = append(argIdx, int32(i)), append(argWorks, wt.work)
			continue
		}
		v := l.logitsBuf(batch[wt.work], wt.work, wt.all, nv)
		if err := l.be.ReadRow(logits, i, v); err != nil {
			return fmt.Errorf("%w: reading logits: %w", executor.ErrDevice, err)
		}
		o := &outs[wt.work]
		if wt.all {
			o.rows = append(o.rows, v)
		}
		o.last = v
	}
	if len(argIdx) > 0 {
		return l.argMaxRows(logits, argIdx, argWorks, outs)
	}
	return nil
}

// hiddenWant is one row of a pass whose hidden state feeds a work's
// embedding; final marks the work's last row of its last piece.
type hiddenWant struct {
	work  int
	final bool
}

// planHidden asks the pass for the hidden states p's work needs: every row
// for mean pooling, the last row of the final piece for last-token pooling.
func planHidden(b *arch.Batch, hidden []hiddenWant, w *executor.Work, p piece, row int) []hiddenWant {
	if w.Embed == executor.EmbedNone {
		return hidden
	}
	lastPiece := p.start+p.n == len(w.Tokens)
	for i := 0; i < p.n; i++ {
		final := lastPiece && i == p.n-1 && w.EmbedFinal
		if w.Embed == executor.EmbedMean || final {
			b.HiddenRows = append(b.HiddenRows, row+i)
			hidden = append(hidden, hiddenWant{work: p.work, final: final})
		}
	}
	return hidden
}

// poolHidden adds a pass's hidden rows to their sequences' sums and, on a
// work's final row, writes its unit-length pooled embedding.
func (l *Executor) poolHidden(batch []executor.Work, h compute.Tensor, wants []hiddenWant, outs []workOut) error {
	if len(wants) == 0 {
		return nil
	}
	row := make([]float32, l.model.HP.NEmbd)
	for i, hw := range wants {
		if err := l.be.ReadRow(h, i, row); err != nil {
			return fmt.Errorf("%w: reading hidden states: %w", executor.ErrDevice, err)
		}
		st := l.seqs[batch[hw.work].Seq]
		if st.embSum == nil {
			st.embSum = make([]float64, len(row))
		}
		if batch[hw.work].Embed == executor.EmbedLast {
			clear(st.embSum)
			st.embN = 0
		}
		for j, v := range row {
			st.embSum[j] += float64(v)
		}
		st.embN++
		if hw.final {
			outs[hw.work].embedding = normalise(st.embSum)
			st.embSum, st.embN = nil, 0
		}
	}
	return nil
}

// normalise returns v scaled to unit length (the mean's scale cancels).
func normalise(v []float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

// logitsBuf returns where one wanted logits row of work index i goes. Rows
// handed back to the caller (Work.Logits) get fresh memory; a vector only
// sampled from reuses the executor's buffer for slot i, so a decode step
// allocates no vocab-sized vectors. Each work wants at most one such vector
// per Step (after its last token), so slots never collide.
func (l *Executor) logitsBuf(w executor.Work, i int, all bool, nv int) []float32 {
	if all || w.Logits != executor.LogitsNone {
		return make([]float32, nv)
	}
	for len(l.sampleBufs) <= i {
		l.sampleBufs = append(l.sampleBufs, nil)
	}
	if len(l.sampleBufs[i]) != nv {
		l.sampleBufs[i] = make([]float32, nv)
	}
	return l.sampleBufs[i]
}

// finish feeds the work's tokens to its sampler, samples and fills in the
// result. A panic here is the sequence's own failure.
func (l *Executor) finish(w *executor.Work, o *workOut, res *executor.Result) {
	defer func() {
		if r := recover(); r != nil {
			res.Err = executor.Errorf(executor.KindBadRequest, "sampling sequence %d panicked: %v", w.Seq, r)
		}
	}()
	res.Embedding = o.embedding
	st := l.seqs[w.Seq]
	if !st.primed {
		st.sampler.Accept(w.History...)
		st.primed = true
	}
	st.sampler.Accept(w.Tokens...)
	switch w.Logits {
	case executor.LogitsAll:
		res.Logits = o.rows
	case executor.LogitsLast:
		res.Logits = [][]float32{o.last}
	}
	if w.TopLogprobs > 0 {
		res.Top = topLogprobs(st.sampler, o.last, w.TopLogprobs)
	}
	if w.Sample && o.hasToken {
		res.Token = o.token
	} else if w.Sample {
		tok, lp, err := l.sampleWork(st.sampler, w, o.last)
		if err != nil {
			res.Err = executor.AsError(fmt.Errorf("sampling sequence %d: %w", w.Seq, err))
			return
		}
		res.Token, res.Logprob = tok, lp
	}
}
