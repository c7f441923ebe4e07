package tp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/sampling"
)

// Worker is a rank 1..N-1 executor in another process (rpc.Remote).
type Worker interface {
	executor.Executor
	PID() int
	Exited() <-chan struct{}
	ExitErr() error
}

// StartWorker starts rank of a group of size in its own process, joining
// the ring through the sockets in dir, with the model loaded as load says.
type StartWorker func(ctx context.Context, rank, size int, dir string, load WorkerLoad) (Worker, error)

// WorkerLoad is what every worker rank loads: the model file and the KV
// pool (the same number of blocks on every rank, so their block tables
// agree).
type WorkerLoad struct {
	Path                                         string
	NumCtx, BlockSize, NumBlocks, Threads, Chunk int
	// WinBlocks is the sliding-window store's size (windowed models).
	WinBlocks int
	KVType    string
}

// Options configure a tensor-parallel model.
type Options struct {
	// Size is the number of ranks (at least 2).
	Size int
	// Exec are rank 0's executor options; Threads is per rank (default:
	// the cores divided among the ranks).
	Exec local.Options
	// Start starts the worker ranks.
	Start StartWorker
	// Timeout bounds each all-reduce exchange (default 5 minutes).
	Timeout time.Duration
}

// Executor runs a model over Size ranks: rank 0 in this process, the others
// in worker processes that receive every step. Sampling, logits and
// embeddings come from rank 0. Any rank failing fails the step (the model
// is poisoned: Exited closes); the group is then only good for Close.
type Executor struct {
	local   *local.Executor
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

// Load opens the model at path and starts it over opts.Size ranks. The
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
	if opts.Size < 2 {
		return nil, fmt.Errorf("tensor-parallel size %d: want at least 2 ranks", opts.Size)
	}
	if err := m.Arch.CheckTP(opts.Size); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.Exec.Threads <= 0 {
		opts.Exec.Threads = max(1, defaultThreads()/opts.Size)
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
	e.info = e.local.Info()
	e.info.Processor = fmt.Sprintf("TP×%d CPU", opts.Size)
	e.info.BlockBytes *= int64(opts.Size)
	e.info.WinBlockBytes *= int64(opts.Size)
	e.info.Ranks = []executor.RankInfo{{Rank: 0, Device: "cpu", PID: os.Getpid()}}
	for i, w := range e.workers {
		e.info.Ranks = append(e.info.Ranks, executor.RankInfo{Rank: i + 1, Device: "cpu", PID: w.PID()})
		go e.watch(i+1, w)
	}
	return e, nil
}

// startRanks starts the workers while rank 0 joins the ring, then loads
// rank 0's shard; any failure cancels the rest.
func (e *Executor) startRanks(ctx context.Context, dir string, m *modelfile.Model, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	size := opts.Size
	// The KV pool is sized here once, so that every rank's agrees.
	hp := m.Arch.ShardHP(size)
	if err := local.FillDefaults(&opts.Exec, &hp); err != nil {
		return err
	}
	load := WorkerLoad{Path: m.Path, NumCtx: opts.Exec.NumCtx, BlockSize: opts.Exec.BlockSize,
		NumBlocks: opts.Exec.NumBlocks, WinBlocks: opts.Exec.WinBlocks, Threads: opts.Exec.Threads, Chunk: opts.Exec.ChunkSize,
		KVType: opts.Exec.KVType}
	workers := make([]Worker, size-1)
	errs := make([]error, size)
	var wg sync.WaitGroup
	wg.Go(func() {
		r, err := JoinRing(ctx, dir, 0, size, opts.Timeout)
		if err == nil {
			e.ring = r
			opts.Exec.Rank, opts.Exec.Size, opts.Exec.Reducer = 0, size, r
			e.local, err = local.New(m, opts.Exec)
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

func defaultThreads() int { return runtime.NumCPU() }

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
	id, err := e.local.NewSeq(p)
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
		e.local.FreeSeq(id)
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
	e.local.FreeSeq(id)
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
	for i, err := range e.local.Check(batch) {
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
	res, err := e.local.Step(ctx, run)
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
	m := e.local.Memory()
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
	if e.local != nil {
		errs[len(e.workers)] = e.local.Close()
	}
	if e.file != nil {
		errs[len(e.workers)+1] = e.file.Close()
	}
	return errors.Join(errs...)
}
