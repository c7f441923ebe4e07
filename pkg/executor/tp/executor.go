package tp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/sampling"
)

// Shard is one rank's share of a model in a process: an executor that
// holds the rank's shard of the weights and sums partial results with the
// other ranks. Check reports, for each work of a batch, why the shard
// would refuse it (nil: it would run it), so that the leader sends every
// rank the same valid works and all of them reach the same all-reduces.
type Shard interface {
	executor.Executor
	Check(batch []executor.Work) []error
}

// Device opens the shards of a tensor-parallel group on one kind of
// device (local.Shards on the CPU). The leader uses it for rank 0 and a
// worker process for its own rank, so that every rank runs alike.
type Device interface {
	// Plan fills the zero values of o for a group of size ranks of m (o.TP
	// is size): what every rank must agree on, such as the KV pool's size,
	// is fixed here once and sent to every rank. Threads, the whole
	// group's, becomes each rank's share.
	Plan(m *modelfile.Model, size int, o executor.LoadOptions) (executor.LoadOptions, error)
	// Open opens rank's shard of m in this process, summing partial
	// results with the other ranks through r. The caller keeps m open
	// until the shard is closed.
	Open(ctx context.Context, m *modelfile.Model, rank, size int, r compute.Reducer, o executor.LoadOptions) (Shard, error)
}

// Worker is a rank 1..N-1 executor in another process (rpc.Remote).
type Worker interface {
	executor.Executor
	PID() int
	Exited() <-chan struct{}
	ExitErr() error
}

// StartWorker starts rank of a group of size in its own process, joining
// the ring through the sockets in dir, with the model loaded as load says
// (the same planned options on every rank, so that their block tables
// agree).
type StartWorker func(ctx context.Context, rank, size int, dir string, load rpc.LoadParams) (Worker, error)

// Options configure a tensor-parallel model.
type Options struct {
	// Load are the model's load options; Load.TP is the number of ranks
	// (at least 2) and Load.Threads the whole group's CPU workers.
	Load executor.LoadOptions
	// Device opens rank 0's shard in this process and plans every rank's
	// options.
	Device Device
	// Start starts the worker ranks.
	Start StartWorker
	// Timeout bounds each all-reduce exchange (default 5 minutes).
	Timeout time.Duration
}

// Executor runs a model over Options.Load.TP ranks: rank 0 in this
// process, the others in worker processes that receive every step.
// Sampling, logits and embeddings come from rank 0. Any rank failing fails
// the step (the model is poisoned: Exited closes); the group is then only
// good for Close.
type Executor struct {
	leader  Shard // rank 0
	file    *modelfile.Model
	ring    *Ring
	workers []Worker
	seqs    map[executor.SeqID][]executor.SeqID // rank 0's id → each worker's
	info    executor.Info

	failed   chan struct{}
	failOnce sync.Once
	failErr  error
	mu       sync.Mutex
	closing  bool
}

var _ executor.Executor = (*Executor)(nil)

// Load opens the model at path and starts it over opts.Load.TP ranks. The
// size is checked against the model first (a *arch.TPSizeError names the
// allowed sizes).
func Load(ctx context.Context, path string, opts Options) (*Executor, error) {
	m, err := modelfile.Open(path)
	if err != nil {
		return nil, err
	}
	e, err := start(ctx, m, opts)
	if err != nil {
		m.Close()
		return nil, err
	}
	return e, nil
}

func start(ctx context.Context, m *modelfile.Model, opts Options) (*Executor, error) {
	size := opts.Load.TP
	if size < 2 {
		return nil, fmt.Errorf("tensor-parallel size %d: want at least 2 ranks", size)
	}
	if opts.Device == nil || opts.Start == nil {
		return nil, errors.New("tensor-parallel load without a device for rank 0 or a starter for the workers")
	}
	if err := m.Arch.CheckTP(size); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	dir, err := os.MkdirTemp("", "helexa-tp-")
	if err != nil {
		return nil, fmt.Errorf("rendezvous directory: %w", err)
	}
	defer os.RemoveAll(dir) // the sockets are only needed to connect
	e := &Executor{seqs: map[executor.SeqID][]executor.SeqID{}, failed: make(chan struct{})}
	if err := e.startRanks(ctx, dir, m, opts); err != nil {
		e.shutdown()
		return nil, err
	}
	e.file = m
	e.info = e.leader.Info()
	e.info.Processor = fmt.Sprintf("TP×%d %s", size, e.info.Processor)
	e.info.BlockBytes *= int64(size)
	e.info.WinBlockBytes *= int64(size)
	e.info.Ranks = []executor.RankInfo{{Rank: 0, Device: deviceName(e.leader), PID: os.Getpid()}}
	for i, w := range e.workers {
		e.info.Ranks = append(e.info.Ranks, executor.RankInfo{Rank: i + 1, Device: deviceName(w), PID: w.PID()})
		go e.watch(i+1, w)
	}
	return e, nil
}

// deviceName is what a rank runs on, as RankInfo shows it ("cpu").
func deviceName(ex executor.Executor) string { return strings.ToLower(ex.Info().Processor) }

// startRanks starts the workers while rank 0 joins the ring, then loads
// rank 0's shard; any failure cancels the rest.
func (e *Executor) startRanks(ctx context.Context, dir string, m *modelfile.Model, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	size := opts.Load.TP
	// The KV pool is sized here once, so that every rank's agrees.
	planned, err := opts.Device.Plan(m, size, opts.Load)
	if err != nil {
		return err
	}
	planned.TP = 0 // each rank holds one shard
	load := rpc.LoadParams{Path: m.Path, LoadOptions: planned}
	workers := make([]Worker, size-1)
	errs := make([]error, size)
	var wg sync.WaitGroup
	wg.Go(func() {
		r, err := JoinRing(ctx, dir, 0, size, opts.Timeout)
		if err == nil {
			e.ring = r
			e.leader, err = opts.Device.Open(ctx, m, 0, size, r, planned)
		}
		if errs[0] = err; err != nil {
			cancel()
		}
	})
	for r := 1; r < size; r++ {
		wg.Go(func() {
			w, err := opts.Start(ctx, r, size, dir, load)
			if workers[r-1], errs[r] = w, err; err != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for _, w := range workers {
		if w != nil {
			e.workers = append(e.workers, w)
		}
	}
	return firstRankError(errs, size)
}

// firstRankError picks the error that explains a failed start: the first
// that is not just the cancellation another rank's failure caused.
func firstRankError(errs []error, size int) error {
	var first error
	for r, err := range errs {
		if err == nil {
			continue
		}
		err = fmt.Errorf("starting rank %d of %d: %w", r, size, err)
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// watch poisons the group when a worker exits on its own.
func (e *Executor) watch(rank int, w Worker) {
	<-w.Exited()
	e.mu.Lock()
	closing := e.closing
	e.mu.Unlock()
	if !closing {
		e.fail(fmt.Errorf("rank %d (pid %d) exited: %w", rank, w.PID(), w.ExitErr()))
	}
}

// fail marks the group failed (once) and breaks the ring, so no rank waits
// on a collective the others will never reach.
func (e *Executor) fail(err error) error {
	e.failOnce.Do(func() {
		e.failErr = err
		if e.ring != nil {
			e.ring.Close()
		}
		close(e.failed)
	})
	return e.failErr
}

// Exited is closed when a rank fails (a worker exits, a step fails): the
// model must be poisoned and reloaded.
func (e *Executor) Exited() <-chan struct{} { return e.failed }

// ExitErr says why the group failed (nil while it works).
func (e *Executor) ExitErr() error {
	select {
	case <-e.failed:
		return e.failErr
	default:
		return nil
	}
}

// Info implements executor.Executor.
func (e *Executor) Info() executor.Info { return e.info }

// NewSeq implements executor.Executor: the sequence exists on every rank.
func (e *Executor) NewSeq(p sampling.Params) (executor.SeqID, error) {
	if err := e.ExitErr(); err != nil {
		return 0, executor.Errorf(executor.KindDevice, "tensor-parallel group failed: %v", err)
	}
	id, err := e.leader.NewSeq(p)
	if err != nil {
		return 0, err
	}
	ids := make([]executor.SeqID, len(e.workers))
	errs := make([]error, len(e.workers))
	var wg sync.WaitGroup
	for i, w := range e.workers {
		wg.Go(func() { ids[i], errs[i] = w.NewSeq(sampling.Params{}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.leader.FreeSeq(id)
		return 0, executor.AsError(e.fail(fmt.Errorf("a worker rank refused a sequence: %w", err)))
	}
	e.seqs[id] = ids
	return id, nil
}

// FreeSeq implements executor.Executor.
func (e *Executor) FreeSeq(id executor.SeqID) {
	ids, ok := e.seqs[id]
	if !ok {
		return
	}
	delete(e.seqs, id)
	e.leader.FreeSeq(id)
	var wg sync.WaitGroup
	for i, w := range e.workers {
		wg.Go(func() { w.FreeSeq(ids[i]) })
	}
	wg.Wait()
}

// Step implements executor.Executor. Every rank runs the same valid works
// (the workers without sampling, logits or embeddings), so every rank
// reaches the same all-reduces. A step is never abandoned half-way: ctx
// ending does not stop it. Every worker's reply is waited for even when one
// fails, and any failure fails the group.
func (e *Executor) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	if err := e.ExitErr(); err != nil {
		return nil, executor.Errorf(executor.KindDevice, "tensor-parallel group failed: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	results := make([]executor.Result, len(batch))
	var run []executor.Work
	var at []int
	for i, err := range e.leader.Check(batch) {
		results[i].Seq = batch[i].Seq
		if err != nil {
			results[i].Err = executor.Errorf(executor.KindBadRequest, "bad request: sequence %d: %v", batch[i].Seq, err)
			continue
		}
		run, at = append(run, batch[i]), append(at, i)
	}
	if len(run) == 0 {
		return results, nil
	}
	errs := make([]error, len(e.workers))
	var wg sync.WaitGroup
	for i, w := range e.workers {
		wg.Go(func() {
			if errs[i] = e.workerStep(ctx, i, w, run); errs[i] != nil {
				e.fail(errs[i]) // unblock rank 0 if it waits on this rank
			}
		})
	}
	res, err := e.leader.Step(ctx, run)
	if err != nil {
		e.fail(fmt.Errorf("rank 0: %w", err))
	}
	wg.Wait()
	if err := errors.Join(append([]error{err}, errs...)...); err != nil {
		return nil, executor.Errorf(executor.KindDevice, "tensor-parallel step failed: %v", e.fail(err))
	}
	for j, i := range at {
		results[i] = res[j]
	}
	return results, nil
}

// workerStep runs the step's forward passes on one worker.
func (e *Executor) workerStep(ctx context.Context, i int, w Worker, run []executor.Work) error {
	wb := make([]executor.Work, len(run))
	for j, r := range run {
		wb[j] = executor.Work{Seq: e.seqs[r.Seq][i], Tokens: r.Tokens, Pos: r.Pos, Blocks: r.Blocks, WinBlocks: r.WinBlocks}
	}
	res, err := w.Step(ctx, wb)
	if err != nil {
		return fmt.Errorf("rank %d: %w", i+1, err)
	}
	for _, r := range res {
		if r.Err != nil {
			return fmt.Errorf("rank %d disagrees with rank 0 on a work: %v", i+1, r.Err)
		}
	}
	return nil
}

// Memory implements executor.Executor: rank 0's figures, with the KV of
// every rank (each holds the same number of blocks).
func (e *Executor) Memory() executor.MemoryInfo {
	m := e.leader.Memory()
	m.KVBytes *= int64(1 + len(e.workers))
	return m
}

// Close implements executor.Executor: it stops every rank.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return nil
	}
	e.closing = true
	e.mu.Unlock()
	return e.shutdown()
}

// shutdown closes the workers, the ring, rank 0 and the file.
func (e *Executor) shutdown() error {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	errs := make([]error, len(e.workers)+2)
	var wg sync.WaitGroup
	for i, w := range e.workers {
		wg.Go(func() { errs[i] = w.Close() })
	}
	if e.ring != nil {
		e.ring.Close()
	}
	wg.Wait()
	if e.leader != nil {
		errs[len(e.workers)] = e.leader.Close()
	}
	if e.file != nil {
		errs[len(e.workers)+1] = e.file.Close()
	}
	return errors.Join(errs...)
}
