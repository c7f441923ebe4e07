package rpc

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// DefaultTimeout is how long Remote waits for any one reply before it
// considers the runner hung (a prefill chunk of a large model on a slow
// CPU stays well below it).
const DefaultTimeout = 5 * time.Minute

// quickTimeout bounds replies that do no compute (memory, free, close).
const quickTimeout = 10 * time.Second

// Remote is an Executor whose model lives in a runner process. It is
// driven by one goroutine, like every Executor; a dead or hung runner
// turns every call into an executor.KindDevice error.
type Remote struct {
	c       *conn
	proc    *process // nil when the conn is not a child process
	info    executor.Info
	timeout time.Duration

	mu      sync.Mutex
	lastMem executor.MemoryInfo
	closed  bool
}

var _ executor.Executor = (*Remote)(nil)

// Info implements executor.Executor (cached from the load).
func (r *Remote) Info() executor.Info { return r.info }

// NewSeq implements executor.Executor.
func (r *Remote) NewSeq(p sampling.Params) (executor.SeqID, error) {
	var rep seqReply
	err := r.c.call(context.Background(), OpNewSeq, newSeqParams{Params: toWireParams(p)}, &rep, true, quickTimeout)
	if err != nil {
		return 0, err
	}
	return rep.Seq, nil
}

// FreeSeq implements executor.Executor. A dead runner has nothing to free.
func (r *Remote) FreeSeq(id executor.SeqID) {
	_ = r.c.call(context.Background(), OpFreeSeq, seqReply{Seq: id}, nil, true, quickTimeout)
}

// Step implements executor.Executor. Once sent, a step is always waited
// for (up to the timeout) even if ctx ends, so the runner and the caller
// never disagree on what the KV cache holds.
func (r *Remote) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	p := stepParams{Works: make([]wireWork, len(batch))}
	for i, w := range batch {
		p.Works[i] = toWireWork(w)
	}
	var rep stepReply
	if err := r.c.call(ctx, OpStep, p, &rep, true, r.timeout); err != nil {
		return nil, err
	}
	out := make([]executor.Result, len(rep.Results))
	for i, w := range rep.Results {
		res, err := w.result()
		if err != nil {
			return nil, executor.Errorf(executor.KindDevice, "runner step reply: %v", err)
		}
		out[i] = res
	}
	return out, nil
}

// Memory implements executor.Executor; when the runner cannot answer, the
// last reading is returned.
func (r *Remote) Memory() executor.MemoryInfo {
	var m executor.MemoryInfo
	if err := r.c.call(context.Background(), OpMemory, nil, &m, false, quickTimeout); err != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.lastMem
	}
	r.mu.Lock()
	r.lastMem = m
	r.mu.Unlock()
	return m
}

// Ping checks that the runner answers.
func (r *Remote) Ping(ctx context.Context) error {
	return r.c.call(ctx, OpPing, nil, nil, false, quickTimeout)
}

// Exited is closed when the runner's pipe ends (the process died or
// closed it); ExitErr then says why.
func (r *Remote) Exited() <-chan struct{} { return r.c.dead }

// ExitErr is why the runner is gone (nil while it runs).
func (r *Remote) ExitErr() error {
	select {
	case <-r.c.dead:
		return r.c.deadErr()
	default:
		return nil
	}
}

// PID is the runner's process id (0 when not a child process).
func (r *Remote) PID() int {
	if r.proc == nil {
		return 0
	}
	return r.proc.pid()
}

// Close implements executor.Executor: it asks the runner to close, then
// makes sure the process is gone.
func (r *Remote) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	err := r.c.call(context.Background(), OpClose, nil, nil, false, quickTimeout)
	if r.proc != nil {
		return r.proc.stop()
	}
	if err != nil && r.ExitErr() == nil {
		return err
	}
	return nil
}

// Connect drives a runner that is already connected through r (its
// replies) and w (its requests), e.g. a worker reached over a socket, and
// loads a model in it.
func Connect(ctx context.Context, r io.Reader, w io.Writer, load LoadParams, log *slog.Logger, timeout time.Duration) (*Remote, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rem := &Remote{c: newConn(r, w, log, nil, nil), timeout: timeout}
	if err := rem.load(ctx, load); err != nil {
		return nil, err
	}
	return rem, nil
}
