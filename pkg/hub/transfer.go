package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// transfer moves one file's bytes into its .incomplete file. Its invariant:
// whenever it returns, the .incomplete file holds only verified-in-order
// bytes (a valid prefix), so helexa and huggingface_hub can both resume it.
// While parallel ranges run, a small state file (<etag>.incomplete.json)
// records the valid prefix so a killed process resumes correctly too.
type transfer struct {
	c         *Client
	f         *os.File
	url       string
	auth      bool
	what      string
	size      int64 // -1 when unknown
	statePath string
	written   atomic.Int64
}

type partState struct {
	Size   int64 `json:"size"`
	Prefix int64 `json:"prefix"`
}

func (d *transfer) add(n int64) { d.written.Add(n) }

func (d *transfer) run(ctx context.Context, repo, file string) error {
	prefix, err := d.startPrefix()
	if err != nil {
		return err
	}
	d.written.Store(prefix)
	d.c.emit(Event{Kind: EventStart, Repo: repo, File: file, Bytes: prefix, Total: d.size})
	stop := d.report(repo, file)
	defer stop()
	if d.size >= 0 && prefix >= d.size {
		return nil
	}
	if d.size >= d.c.opts.ParallelThreshold && d.c.opts.Connections > 1 {
		err = d.parallel(ctx, prefix)
		if !errors.Is(err, errNoRange) {
			return err
		}
		if prefix, err = d.startPrefix(); err != nil {
			return err
		}
	}
	return d.sequential(ctx, prefix)
}

// startPrefix returns how many leading bytes of the partial file are valid,
// truncating anything after them.
func (d *transfer) startPrefix() (int64, error) {
	fi, err := d.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.what, err)
	}
	prefix := fi.Size()
	if data, err := os.ReadFile(d.statePath); err == nil {
		var st partState
		if json.Unmarshal(data, &st) == nil && st.Size == d.size && st.Prefix >= 0 && st.Prefix <= prefix {
			prefix = st.Prefix
		} else {
			prefix = 0
		}
	}
	if d.size >= 0 && prefix > d.size {
		prefix = 0
	}
	if prefix != fi.Size() {
		if err := d.f.Truncate(prefix); err != nil {
			return 0, fmt.Errorf("%s: %w", d.what, err)
		}
	}
	os.Remove(d.statePath)
	return prefix, nil
}

// report emits progress events from one goroutine until stopped.
func (d *transfer) report(repo, file string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if n := d.written.Load(); n != last {
					last = n
					d.c.emit(Event{Kind: EventProgress, Repo: repo, File: file, Bytes: n, Total: d.size})
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// withRetry calls f until it succeeds; failures that made progress do not
// count against the retry budget.
func (d *transfer) withRetry(ctx context.Context, f func() (int64, error)) error {
	fails := 0
	for {
		n, err := f()
		if err == nil {
			return nil
		}
		if n > 0 {
			fails = 0
		}
		if !retryable(err) || fails >= d.c.opts.MaxRetries || ctx.Err() != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, ctx.Err())
			}
			return err
		}
		if err := sleepCtx(ctx, d.c.backoff(fails, err)); err != nil {
			return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, err)
		}
		fails++
	}
}

// sequential streams from prefix to the end in one request (resumed with
// Range after a drop).
func (d *transfer) sequential(ctx context.Context, prefix int64) error {
	pos := prefix
	return d.withRetry(ctx, func() (int64, error) {
		n, err := d.getRange(ctx, pos, -1, d.add)
		if errors.Is(err, errNoRange) { // cannot resume: start over
			if err := d.f.Truncate(0); err != nil {
				return 0, fmt.Errorf("%s: %w", d.what, err)
			}
			d.written.Store(0)
			pos = 0
			n, err = d.getRange(ctx, 0, -1, d.add)
		}
		pos += n
		if err == nil && d.size >= 0 && pos < d.size {
			err = fmt.Errorf("%s: %w", d.what, errDropped)
		}
		return n, err
	})
}

// parallel downloads [prefix, size) as fixed chunks taken in order by
// several workers; the valid prefix advances as chunks complete.
func (d *transfer) parallel(ctx context.Context, prefix int64) error {
	conns := int64(d.c.opts.Connections)
	minChunk := max(d.c.opts.ParallelThreshold/8, 1) // 8 MiB by default
	chunk := min(max((d.size-prefix)/(conns*4), minChunk), 8*minChunk)
	nChunks := int((d.size - prefix + chunk - 1) / chunk)
	p := &progressTracker{d: d, base: prefix, chunk: chunk, done: make([]bool, nChunks), prefix: prefix}
	if err := p.save(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < int(min(conns, int64(nChunks))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= nChunks || ctx.Err() != nil {
					return
				}
				if err := d.fetchChunk(ctx, p, i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	err := context.Cause(ctx)
	// Keep only the valid prefix so any resumer (helexa or Python) is right.
	if terr := d.f.Truncate(p.prefix); terr != nil && err == nil {
		err = fmt.Errorf("%s: %w", d.what, terr)
	}
	d.written.Store(p.prefix)
	os.Remove(d.statePath)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, err)
	}
	return nil
}

func (d *transfer) fetchChunk(ctx context.Context, p *progressTracker, i int) error {
	start := p.base + int64(i)*p.chunk
	end := min(start+p.chunk, d.size)
	pos := start
	err := d.withRetry(ctx, func() (int64, error) {
		n, err := d.getRange(ctx, pos, end, d.add)
		pos += n
		return n, err
	})
	if err != nil {
		return err
	}
	return p.complete(i)
}

// progressTracker records finished chunks and the valid prefix.
type progressTracker struct {
	d      *transfer
	base   int64
	chunk  int64
	mu     sync.Mutex
	done   []bool
	prefix int64
}

func (p *progressTracker) complete(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done[i] = true
	old := p.prefix
	for j := int((p.prefix - p.base) / p.chunk); j < len(p.done) && p.done[j]; j++ {
		p.prefix = min(p.base+int64(j+1)*p.chunk, p.d.size)
	}
	if p.prefix == old {
		return nil
	}
	return p.save()
}

func (p *progressTracker) save() error {
	data, _ := json.Marshal(partState{Size: p.d.size, Prefix: p.prefix})
	return writeFileAtomic(p.d.statePath, data)
}
