package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/executor"
)

// scheduler owns one loaded model's executor: a single goroutine admits
// requests, builds each step's batch (one decode token for every running
// sequence plus prefill chunks within the chunk budget), runs it and hands
// the sampled tokens to each sequence's generation.
type scheduler struct {
	name     string
	model    *Model
	exec     executor.Executor
	info     executor.Info
	cfg      Config
	log      *slog.Logger
	counters *counters
	pool     *blockPool
	win      *winStore  // the sliding-window store (nil: none)
	snaps    *snapCache // recurrent state snapshots (nil: none)
	turns    *turnStore // recent chat turns' ids, for the next turns (used by callers, not the loop)

	incoming chan *request
	// memq asks the loop for a fresh executor.Memory reading (the executor
	// is only driven from the loop's goroutine).
	memq chan chan executor.MemoryInfo
	ctx  context.Context // the model's lifetime
	done chan struct{}
	// onPoison is called (from the scheduler goroutine) when a step fails.
	onPoison func(error)
	// exited is closed when an out-of-process executor's runner is gone
	// (nil in-process): an idle model is poisoned at once, not at its
	// next step.
	exited <-chan struct{}
	// stopErr is what requests still in flight get when the loop ends;
	// written by the loop before done closes.
	stopErr error

	queue   []*request
	running []*sequence

	// JSON mode: the vocabulary's token texts, built on first use.
	vocabText [][]byte

	mu sync.Mutex
	g  gauges
}

// gauges are the scheduler's live numbers, read by PS and Metrics.
type gauges struct {
	running, queued                      int
	blocksUsed, blocksFree, blocksCached int
	winUsed, winFree, winCached          int // the sliding-window store
	mem                                  executor.MemoryInfo
}

// sequence is an admitted request with its KV blocks.
type sequence struct {
	req       *request
	eid       executor.SeqID
	tokens    []int32 // prompt, then generated tokens
	promptLen int
	computed  int     // positions whose KV is present
	blocks    []int32 // block table
	hashes    []uint64
	reserve   int // blocks promised but not yet taken
	// the sliding-window store's table (-1: released), the first live
	// entry and the window blocks promised but not taken
	wblocks  []int32
	wlow     int
	wreserve int
	// recurrent state snapshots: the one the first step restores (pinned
	// until then), and where the prompt's is to be saved (snapAt 0: not)
	// under which key while its step runs
	load     *snapEntry
	snapAt   int
	snapHash uint64
	saving   uint64
	history  []int32 // the cached prefix, sent with the first step
	cached   int
	maxTotal int
	started  time.Time // first step
	firstTok time.Time // first sampled token
	finished bool
}

func newScheduler(ctx context.Context, name string, m *Model, cfg Config, log *slog.Logger, c *counters, onPoison func(error)) *scheduler {
	info := m.Executor.Info()
	s := &scheduler{
		name: name, model: m, exec: m.Executor, info: info, cfg: cfg, log: log, counters: c,
		pool:     newBlockPool(info.NumBlocks, info.BlockSize),
		win:      newWinStore(info, cfg.ChunkSize),
		snaps:    newSnapCache(info, cfg.NumParallel),
		turns:    newTurnStore(cfg.NumParallel),
		incoming: make(chan *request),
		memq:     make(chan chan executor.MemoryInfo),
		ctx:      ctx,
		done:     make(chan struct{}),
		onPoison: onPoison,
		exited:   exitedChan(m.Executor),
	}
	s.g.mem = m.Executor.Memory()
	s.publish()
	return s
}

// memory returns a fresh executor.Memory reading taken by the loop (between
// steps), or the last snapshot when the loop has ended or does not answer
// before ctx ends (a long step).
func (s *scheduler) memory(ctx context.Context) executor.MemoryInfo {
	reply := make(chan executor.MemoryInfo, 1)
	select {
	case s.memq <- reply:
		select {
		case mem := <-reply:
			return mem
		case <-ctx.Done():
		}
	case <-s.done:
	case <-ctx.Done():
	}
	return s.gauges().mem
}

func (s *scheduler) answerMemory(reply chan executor.MemoryInfo) {
	mem := s.exec.Memory()
	s.mu.Lock()
	s.g.mem = mem
	s.mu.Unlock()
	reply <- mem
}

// submit hands a request to the loop; it fails when the loop has ended.
func (s *scheduler) submit(r *request) error {
	select {
	case s.incoming <- r:
		return nil
	case <-s.done:
		return s.stopErr
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

func (s *scheduler) gauges() gauges {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g
}

func (s *scheduler) publish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.g.running, s.g.queued = len(s.running), len(s.queue)
	s.g.blocksUsed = s.pool.used()
	s.g.blocksFree = s.pool.total() - s.g.blocksUsed
	s.g.blocksCached = s.pool.cachedIdle()
	if s.win != nil {
		s.g.winUsed, s.g.winCached = s.win.pool.used(), s.win.pool.cachedIdle()
		s.g.winFree = s.win.pool.total() - s.g.winUsed
	}
}

// run is the model's loop. It ends when the model is unloaded or poisoned;
// every request it accepted gets its final event.
func (s *scheduler) run() {
	defer close(s.done)
	defer s.recoverLoop()
	for {
		if len(s.running) == 0 && len(s.queue) == 0 {
			select {
			case r := <-s.incoming:
				s.enqueue(r)
			case reply := <-s.memq:
				s.answerMemory(reply)
				continue
			case <-s.ctx.Done():
				s.stop(Errorf(KindBusy, "model %q was unloaded while the request was running; send it again", s.name))
				return
			case <-s.exited:
				s.poison(s.exec.(exitWatcher).ExitErr())
				return
			}
		}
		s.drainIncoming()
		if s.ctx.Err() != nil {
			s.stop(Errorf(KindBusy, "model %q was unloaded while the request was running; send it again", s.name))
			return
		}
		s.dropCancelled()
		s.admit()
		if len(s.running) > 0 {
			if err := s.step(); err != nil {
				if s.ctx.Err() != nil { // unloaded mid-step, not a device failure
					s.stop(Errorf(KindBusy, "model %q was unloaded while the request was running; send it again", s.name))
					return
				}
				s.poison(err)
				return
			}
		}
		s.publish()
	}
}

func (s *scheduler) enqueue(r *request) {
	r.queued = time.Now()
	s.queue = append(s.queue, r)
}

func (s *scheduler) drainIncoming() {
	for {
		select {
		case r := <-s.incoming:
			s.enqueue(r)
		case reply := <-s.memq:
			s.answerMemory(reply)
		default:
			return
		}
	}
}

// stop fails everything in flight with err and frees every sequence.
func (s *scheduler) stop(err error) {
	s.stopErr = err
	for _, q := range s.running {
		s.finish(q, "", err)
	}
	s.running = nil
	for _, r := range s.queue {
		s.reply(r, "", Usage{PromptTokens: len(r.prompt)}, err)
	}
	s.queue = nil
	s.publish()
}

// recoverLoop turns a panic in the loop (engine code, or the executor
// outside Step) into a poisoned model instead of a crashed process. Neither
// the executor nor the block pool can be trusted afterwards, so every
// request in flight is answered without touching them.
func (s *scheduler) recoverLoop() {
	p := recover()
	if p == nil {
		return
	}
	cause := fmt.Errorf("%w: panic in the scheduler: %v\n%s", executor.ErrDevice, p, debug.Stack())
	s.onPoison(cause)
	err := s.poisonedError(cause)
	s.stopErr = err
	for _, q := range s.running {
		if !q.finished {
			q.finished = true
			s.reply(q.req, "", Usage{PromptTokens: q.promptLen, CachedTokens: q.cached, CompletionTokens: q.req.gen.generated}, err)
		}
	}
	s.running = nil
	for _, r := range s.queue {
		s.reply(r, "", Usage{PromptTokens: len(r.prompt)}, err)
	}
	s.queue = nil
	s.mu.Lock()
	s.g.running, s.g.queued = 0, 0
	s.mu.Unlock()
}

func (s *scheduler) poisonedError(cause error) error {
	return &Error{Kind: KindPoisoned, Msg: fmt.Sprintf(
		"model %q failed during a step and is poisoned; the next request for it loads it again", s.name), Err: cause}
}

func (s *scheduler) poison(cause error) {
	s.onPoison(cause)
	s.stop(s.poisonedError(cause))
}

// dropCancelled removes requests whose caller has gone, between steps.
func (s *scheduler) dropCancelled() {
	for _, q := range s.running {
		if err := q.req.ctx.Err(); err != nil {
			s.flushCancelled(q)
			s.finish(q, "cancelled", err)
		}
	}
	s.compact()
	s.queue = slices.DeleteFunc(s.queue, func(r *request) bool {
		if err := r.ctx.Err(); err != nil {
			s.reply(r, "cancelled", Usage{PromptTokens: len(r.prompt)}, err)
			return true
		}
		return false
	})
}

func (s *scheduler) compact() {
	s.running = slices.DeleteFunc(s.running, func(q *sequence) bool { return q.finished })
}

// errNoRoom means a request must wait for blocks to free up.
var errNoRoom = errors.New("no KV room yet")

// admit moves queued requests into the running batch while there are
// sequence slots and KV blocks for them.
func (s *scheduler) admit() {
	for len(s.queue) > 0 && len(s.running) < s.cfg.NumParallel {
		r := s.queue[0]
		q, err := s.start(r)
		if errors.Is(err, errNoRoom) {
			if len(s.running) > 0 {
				return // wait for running sequences to free blocks
			}
			err = Errorf(KindNoMemory, "the KV cache of model %q cannot hold this request even when idle; use a smaller prompt or max_tokens, or load the model with a larger context", s.name)
		}
		s.queue = s.queue[1:]
		if err != nil {
			s.reply(r, "", Usage{PromptTokens: len(r.prompt)}, err)
			continue
		}
		s.running = append(s.running, q)
	}
}

// start reuses the longest cached prefix of r's prompt, reserves blocks for
// the rest of its budget and allocates its executor sequence.
func (s *scheduler) start(r *request) (*sequence, error) {
	bs := s.info.BlockSize
	total := s.budget(r)
	need := blocksFor(total, bs)
	maxMatch := (len(r.prompt) - 1) / bs // the last prompt token is always computed
	if r.embed != executor.EmbedNone || s.info.Recurrent && s.snaps == nil {
		// pooling needs every token's hidden state; a recurrent state
		// holds the whole history and cannot resume from shared pages
		// without a snapshot of it
		maxMatch = 0
	}
	blocks, hashes := s.pool.match(r.prompt, maxMatch)
	keep := func(k int) { // shorten the match to its first k blocks
		s.pool.releaseAll(blocks[k:])
		blocks, hashes = blocks[:k], hashes[:k]
	}
	var load *snapEntry
	if s.snaps != nil { // resume only where a snapshot of the state is
		var k int
		k, load = s.snaps.longest(hashes, bs)
		keep(k)
	}
	var wblocks []int32
	wreserve := 0
	if s.win != nil { // keep only a prefix whose window tail is cached too
		var k int
		k, wblocks = s.win.match(r.prompt, hashes)
		keep(k)
		wreserve = s.win.reserveFor(need, wblocks)
	}
	reserve := need - len(blocks)
	release := func() {
		s.pool.releaseAll(blocks)
		for _, b := range wblocks {
			if b >= 0 {
				s.win.pool.release(b)
			}
		}
		if load != nil {
			s.snaps.unpin(load)
		}
	}
	if s.pool.available() < reserve || s.win != nil && s.win.pool.available() < wreserve {
		release()
		return nil, errNoRoom
	}
	if err := s.checkLazyKV(reserve, wreserve); err != nil {
		release()
		return nil, err
	}
	eid, err := s.exec.NewSeq(r.opts.Sampling)
	if err != nil {
		release()
		return nil, requestError(err, "sampling settings")
	}
	s.pool.reserved += reserve
	if s.win != nil {
		s.win.pool.reserved += wreserve
	}
	cached := len(blocks) * bs
	q := &sequence{
		req: r, eid: eid,
		tokens:    slices.Clone(r.prompt),
		promptLen: len(r.prompt),
		computed:  cached, cached: cached,
		blocks: blocks, hashes: hashes,
		reserve: reserve, maxTotal: total,
		wblocks: wblocks, wreserve: wreserve,
		load: load,
	}
	if s.snaps != nil {
		q.snapAt, q.snapHash = snapshotPlan(r.prompt, bs, hashes)
	}
	if s.win != nil {
		q.wlow = s.win.firstBlock(cached)
	}
	if cached > 0 {
		q.history = r.prompt[:cached]
	}
	return q, nil
}

// budget is how many positions a request may use: its prompt plus
// max_tokens, capped by the context.
func (s *scheduler) budget(r *request) int {
	if r.embed != executor.EmbedNone {
		return len(r.prompt)
	}
	if r.opts.MaxTokens <= 0 {
		return s.info.NCtx
	}
	return min(len(r.prompt)+r.opts.MaxTokens, s.info.NCtx)
}

// checkLazyKV refuses a request when the executor allocates KV on demand
// and the memory for it (reserve more blocks, wreserve more window blocks)
// is not free.
func (s *scheduler) checkLazyKV(reserve, wreserve int) error {
	full := int64(s.info.NumBlocks)*s.info.BlockBytes + int64(s.info.WinNumBlocks)*s.info.WinBlockBytes
	if full <= 0 {
		return nil
	}
	mem := s.exec.Memory()
	s.mu.Lock()
	s.g.mem = mem
	s.mu.Unlock()
	if mem.KVBytes >= full {
		return nil // the pool is preallocated
	}
	want := int64(s.pool.used()+s.pool.reserved+reserve)*s.info.BlockBytes + s.win.bytes(s.info, wreserve) +
		s.info.StateBytes - mem.KVBytes
	if want <= mem.FreeBytes {
		return nil
	}
	if len(s.running) > 0 {
		return errNoRoom
	}
	return Errorf(KindNoMemory, "the KV cache for this request needs %s more but only %s is free; use a smaller prompt or max_tokens, or unload another model",
		humanize.Bytes(want), humanize.Bytes(mem.FreeBytes))
}

// finish ends a sequence: frees its executor state and blocks and sends
// the result. reason "" with err != nil is a failure.
func (s *scheduler) finish(q *sequence, reason string, err error) {
	if q.finished {
		return
	}
	q.finished = true
	u := Usage{
		PromptTokens:     q.promptLen,
		CachedTokens:     q.cached,
		CompletionTokens: q.req.gen.generated,
	}
	if !q.started.IsZero() {
		end := time.Now()
		if q.firstTok.IsZero() {
			u.PrefillDuration = end.Sub(q.started)
		} else {
			u.PrefillDuration = q.firstTok.Sub(q.started)
			u.DecodeDuration = end.Sub(q.firstTok)
		}
	}
	// Answer even when freeing panics (the loop then poisons the model).
	defer s.end(q.req, reason, u, err, q.generated())
	s.exec.FreeSeq(q.eid)
	s.pool.releaseAll(q.blocks)
	q.blocks = nil
	s.pool.reserved -= q.reserve
	q.reserve = 0
	if s.win != nil {
		s.win.free(q)
	}
	s.snapshotDone(q, false)
}

// snapshotDone ends q's part in the snapshot cache after a step (ok: the
// step succeeded) or when q ends: the snapshot it restored is unpinned, the
// one its step saved becomes usable (or is forgotten when the step failed).
func (s *scheduler) snapshotDone(q *sequence, ok bool) {
	if s.snaps == nil {
		return
	}
	if q.load != nil {
		s.snaps.unpin(q.load)
		q.load = nil
	}
	if q.saving != 0 {
		s.snaps.saved(q.snapHash, ok)
		q.saving, q.snapAt = 0, 0
	}
}

func (s *scheduler) reply(r *request, reason string, u Usage, err error) {
	s.end(r, reason, u, err, nil)
}

// end sends a request's final event, with the ids it generated.
func (s *scheduler) end(r *request, reason string, u Usage, err error, generated []int32) {
	res := Result{FinishReason: reason, Usage: u, Embedding: r.embedding}
	if r.gen != nil && reason == "stop" {
		res.StopSequence = r.gen.stop.matched
	}
	r.out.send(event{done: true, res: res, err: err, generated: generated})
}

// flushCancelled sends what a cancelled sequence's output still holds, so
// the caller's Result.Undelivered has the text of every token generated.
func (s *scheduler) flushCancelled(q *sequence) {
	var d *Delta
	if guard("finishing the output", func() error { d = q.req.gen.finish(false); return nil }) == nil {
		s.deliver(q, d)
	}
}

// generated returns the ids q sampled after its prompt that stand for its
// output: none when the output dropped the text of some (a stop string).
func (q *sequence) generated() []int32 {
	if q.req.gen == nil || q.req.gen.dropped || len(q.tokens) <= q.promptLen {
		return nil
	}
	return q.tokens[q.promptLen:]
}

// requestError classifies an error that is one request's own.
func requestError(err error, what string) error {
	var re *Error
	if errors.As(err, &re) {
		return err
	}
	if errors.Is(err, executor.ErrBadRequest) {
		return &Error{Kind: KindBadRequest, Msg: "invalid " + what, Err: err}
	}
	return &Error{Kind: KindInternal, Msg: what + " failed", Err: err}
}
