package compute

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
	n, chunk int
	next     atomic.Int64
	fn       func(lo, hi int)
	pending  atomic.Int32 // helpers that have not finished
	mu       sync.Mutex
	panicked any // the first panic of a helper, re-raised in the caller
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
// before it parks (about a millisecond): the operations of a forward pass
// follow each other within microseconds, and waking a parked goroutine
// costs more than many of them take.
const spinPolls = 20000

func (p *pool) run() {
	defer p.wg.Done()
	for {
		if l := p.poll(); l != nil {
			l.helperWork()
			continue
		}
		select {
		case l := <-p.tasks:
			l.helperWork()
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

func (l *loop) helperWork() {
	defer l.pending.Add(-1)
	defer func() {
		if r := recover(); r != nil {
			l.mu.Lock()
			if l.panicked == nil {
				l.panicked = r
			}
			l.mu.Unlock()
			l.next.Store(int64(l.n)) // stop handing out chunks
		}
	}()
	l.work()
}

func (l *loop) work() {
	for {
		lo := int(l.next.Add(int64(l.chunk))) - l.chunk
		if lo >= l.n {
			return
		}
		l.fn(lo, min(lo+l.chunk, l.n))
	}
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
	// about four chunks per worker balances uneven rows without much overhead
	chunk := max(minChunk, (n+4*p.workers-1)/(4*p.workers))
	l := &loop{n: n, chunk: chunk, fn: fn}
	l.pending.Store(int32(helpers))
	for i := 0; i < helpers; i++ {
		p.tasks <- l
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				l.next.Store(int64(l.n))
				l.wait()
				panic(r)
			}
		}()
		l.work()
	}()
	l.wait()
	if l.panicked != nil {
		panic(l.panicked)
	}
}

// wait spins until every helper is done: the caller has run out of chunks,
// so the helpers are finishing their last ones (or have not started, and
// will find nothing left). Parking here would cost a wake-up per operation.
func (l *loop) wait() {
	for i := 0; l.pending.Load() > 0; i++ {
		if i >= spinPolls/20 {
			runtime.Gosched() // a helper that has not started needs this P
		}
	}
}

func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
}
