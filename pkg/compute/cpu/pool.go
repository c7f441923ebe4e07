package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// pool is a fixed set of worker goroutines that run parallel loops. Each
// parallelFor call hands out chunk indices through an atomic counter, so a
// call never starts goroutines of its own.
type pool struct {
	workers int
	tasks   chan *loop
	stop    chan struct{}
	wg      sync.WaitGroup
}

// loop is one parallelFor call shared by the workers that help with it.
type loop struct {
	n, minChunk int
	split       int // a chunk is at least 1/split of what is left
	next        atomic.Int64
	fn          func(lo, hi int)
	running     atomic.Int32 // workers claiming or running a chunk
	mu          sync.Mutex
	panicked    any // the first panic of a chunk, re-raised in the caller
}

func newPool(workers int) *pool {
	if workers < 1 {
		workers = 1
	}
	p := &pool{workers: workers, tasks: make(chan *loop, workers), stop: make(chan struct{})}
	for i := 1; i < workers; i++ { // the caller is the first worker
		p.wg.Add(1)
		go p.run()
	}
	return p
}

// spinPolls is how many times an idle worker polls for the next loop
// before it parks (about 0.1 ms on the 2-core EPYC VMs measured): the
// operations of a forward pass follow each other within microseconds, and
// waking a parked goroutine costs more than many of them take. Spinning
// ten times longer parked five times less often and was no faster.
const spinPolls = 20000

func (p *pool) run() {
	defer p.wg.Done()
	for {
		if l := p.poll(); l != nil {
			l.work()
			continue
		}
		select {
		case l := <-p.tasks:
			l.work()
		case <-p.stop:
			return
		}
	}
}

// poll spins for a loop to help with, returning nil when none came.
func (p *pool) poll() *loop {
	for i := 0; i < spinPolls; i++ {
		select {
		case l := <-p.tasks:
			return l
		default:
		}
	}
	return nil
}

// work runs chunks until none is left. Chunks shrink as the loop drains
// (guided scheduling: a share of what is left, at least minChunk), so the
// workers finish together even when one runs slower or starts late, and
// the first chunks are long runs of rows for the prefetchers.
func (l *loop) work() {
	for {
		l.running.Add(1)
		lo, hi, ok := l.claim()
		if !ok {
			l.running.Add(-1)
			return
		}
		l.run(lo, hi)
	}
}

// claim takes the next chunk.
func (l *loop) claim() (lo, hi int, ok bool) {
	for {
		next := l.next.Load()
		if next >= int64(l.n) {
			return 0, 0, false
		}
		left := int64(l.n) - next
		end := next + min(left, max(int64(l.minChunk), left/int64(l.split)))
		if l.next.CompareAndSwap(next, end) {
			return int(next), int(end), true
		}
	}
}

// run calls fn on one chunk. A panic stops the loop (no more chunks are
// handed out) and is kept for the caller before this worker counts as
// done.
func (l *loop) run(lo, hi int) {
	defer func() {
		if r := recover(); r != nil {
			l.mu.Lock()
			if l.panicked == nil {
				l.panicked = r
			}
			l.mu.Unlock()
			l.next.Store(int64(l.n))
		}
		l.running.Add(-1)
	}()
	l.fn(lo, hi)
}

// parallelFor calls fn on disjoint ranges covering [0, n), in parallel.
// minChunk is the smallest range worth handing to another worker.
func (p *pool) parallelFor(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	minChunk = max(minChunk, 1)
	helpers := min(p.workers-1, n/minChunk-1)
	if helpers <= 0 {
		fn(0, n)
		return
	}
	l := &loop{n: n, minChunk: minChunk, split: 2 * p.workers, fn: fn}
	for i := 0; i < helpers; i++ {
		select {
		case p.tasks <- l:
		default: // loops the helpers have not taken yet: they are behind, and the caller does not wait for them
		}
	}
	l.work()
	l.wait()
	if l.panicked != nil {
		panic(l.panicked)
	}
}

// wait spins until no worker is running a chunk. The caller has run out
// of chunks, so a helper is finishing its last one; a helper that has not
// started yet will find nothing left and is not waited for (waking a
// parked one costs tens to hundreds of microseconds here). Parking the
// caller would cost a wake-up per operation.
func (l *loop) wait() {
	for i := 0; l.running.Load() > 0; i++ {
		if i >= spinPolls/20 {
			runtime.Gosched() // a running helper may need this P
		}
	}
}

func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
}
