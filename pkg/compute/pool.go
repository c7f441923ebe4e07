package compute

import (
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
	done     sync.WaitGroup
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

func (p *pool) run() {
	defer p.wg.Done()
	for {
		select {
		case l := <-p.tasks:
			l.helperWork()
		case <-p.stop:
			return
		}
	}
}

func (l *loop) helperWork() {
	defer l.done.Done()
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
	l.done.Add(helpers)
	for i := 0; i < helpers; i++ {
		p.tasks <- l
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				l.next.Store(int64(l.n))
				l.done.Wait()
				panic(r)
			}
		}()
		l.work()
	}()
	l.done.Wait()
	if l.panicked != nil {
		panic(l.panicked)
	}
}

func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
}
