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
// <etag>.incomplete, whenever it exists, holds only in-order bytes (a valid
// prefix), because that is how huggingface_hub resumes it too (from its
// size). Parallel ranges land out of order, so while they run the data lives
// in <etag>.incomplete.parallel (a name Python does not know) and a small
// state file, <etag>.incomplete.json, records its valid prefix; a killed
// process leaves both behind and the next helexa run resumes from the
// prefix, while Python sees no partial file and starts afresh.
type transfer struct {
	c         *Client
	f         *os.File // the file being written (part or scratch)
	part      string   // <etag>.incomplete
	scratch   string   // <etag>.incomplete.parallel
	statePath string   // <etag>.incomplete.json
	what      string
	size      int64 // -1 when unknown
	written   atomic.Int64

	mu       sync.Mutex // guards url, auth and renewals
	url      string
	auth     bool
	renewals int
	// renewURL asks the Hub again for the file's download location: signed
	// CDN links expire (after about an hour), and a long download outlives them.
	renewURL func(context.Context) (*fileMeta, error)
}

// partState is the state file: the valid prefix of the scratch file (or,
// when there is none, of the .incomplete file).
type partState struct {
	Size   int64 `json:"size"`
	Prefix int64 `json:"prefix"`
}

func newTransfer(c *Client, blob, url string, auth bool, what string, size int64) *transfer {
	part := blob + ".incomplete"
	return &transfer{c: c, part: part, scratch: part + ".parallel", statePath: part + ".json",
		url: url, auth: auth, what: what, size: size}
}

func (d *transfer) add(n int64) { d.written.Add(n) }

// location is the URL to GET the file from, and whether to send the token.
func (d *transfer) location() (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url, d.auth
}

// maxRenewals bounds how many fresh links one download asks for (real
// links last about an hour each), so a CDN that refuses every link fails
// the download instead of looping.
const maxRenewals = 50

// renew replaces the download URL that failed (refused with cause) with a
// fresh one from the Hub; of several workers that saw the same link fail,
// only the first asks.
func (d *transfer) renew(ctx context.Context, failed string, cause error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.url != failed {
		return nil
	}
	if d.renewURL == nil || d.renewals >= maxRenewals {
		return fmt.Errorf("%s: the download server refused %d fresh links in a row: %w", d.what, d.renewals, cause)
	}
	d.renewals++
	meta, err := d.renewURL(ctx)
	if err != nil {
		return err
	}
	d.url, d.auth = meta.Location, sameHost(meta.Location, d.c.opts.Endpoint)
	return nil
}

func (d *transfer) run(ctx context.Context, repo, file string) error {
	if err := checkPartials(d.part, d.scratch, d.statePath); err != nil {
		return err
	}
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

// startPrefix recovers what earlier attempts left (this process, a killed
// helexa, or huggingface_hub) into <etag>.incomplete holding only its valid
// prefix, and returns that prefix's length.
func (d *transfer) startPrefix() (int64, error) {
	partSize := fileSize(d.part)
	st, hasState := d.readState()
	if scratchSize := fileSize(d.scratch); scratchSize >= 0 {
		if hasState && st.Prefix <= scratchSize && st.Prefix > max(partSize, 0) {
			if err := os.Truncate(d.scratch, st.Prefix); err != nil {
				return 0, fmt.Errorf("%s: %w", d.what, err)
			}
			if err := os.Rename(d.scratch, d.part); err != nil {
				return 0, fmt.Errorf("%s: %w", d.what, err)
			}
			partSize = st.Prefix
		}
		os.Remove(d.scratch)
	} else if hasState && partSize > st.Prefix { // state of a parallel run that wrote into .incomplete
		if err := os.Truncate(d.part, st.Prefix); err != nil {
			return 0, fmt.Errorf("%s: %w", d.what, err)
		}
		partSize = st.Prefix
	}
	os.Remove(d.statePath)
	if d.size >= 0 && partSize > d.size {
		if err := os.Truncate(d.part, 0); err != nil {
			return 0, fmt.Errorf("%s: %w", d.what, err)
		}
		partSize = 0
	}
	return max(partSize, 0), nil
}

// readState reads the state file; ok is false when it is missing, unreadable
// or about another size of file.
func (d *transfer) readState() (partState, bool) {
	var st partState
	data, err := os.ReadFile(d.statePath)
	if err != nil || json.Unmarshal(data, &st) != nil || st.Size != d.size || st.Prefix < 0 {
		return st, false
	}
	return st, true
}

// fileSize is the size of p, or -1 when it does not exist.
func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
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

// stallProgress is how much a stalled attempt must have received for its
// stall not to count against the retry budget: a server that sends a
// little and stalls every time must fail, not trickle forever.
const stallProgress = 1 << 20

// withRetry calls f until it succeeds; failures that made progress (for a
// stall, at least stallProgress bytes) do not count against the retry
// budget.
func (d *transfer) withRetry(ctx context.Context, f func() (int64, error)) error {
	fails := 0
	for {
		n, err := f()
		if err == nil {
			return nil
		}
		stalled := errors.Is(err, ErrStalled)
		if (n > 0 && !stalled) || n >= stallProgress {
			fails = 0
		}
		if errors.Is(err, errLinkExpired) && ctx.Err() == nil {
			continue // a fresh link is ready; renew bounds how often that happens
		}
		if !retryable(err) || fails >= d.c.opts.MaxRetries || ctx.Err() != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, ctx.Err())
			}
			if stalled {
				return fmt.Errorf("%w; gave up after %d tries (the partial file is kept and resumes next time)", err, fails+1)
			}
			return err
		}
		if err := sleepCtx(ctx, d.c.backoff(fails, err)); err != nil {
			return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, err)
		}
		fails++
	}
}

// sequential streams from prefix to the end of <etag>.incomplete in one
// request (resumed with Range after a drop).
func (d *transfer) sequential(ctx context.Context, prefix int64) error {
	f, err := openPartial(d.part)
	if err != nil {
		return err
	}
	d.f = f
	pos := prefix
	err = d.withRetry(ctx, func() (int64, error) {
		n, err := d.getRange(ctx, pos, -1, d.add)
		if errors.Is(err, errNoRange) { // cannot resume: start over
			if err := f.Truncate(0); err != nil {
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
	if cerr := f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close %s: %w", d.part, cerr)
	}
	return err
}

// parallel downloads [prefix, size) as fixed chunks taken in order by
// several workers into the scratch file; the valid prefix advances as
// chunks complete, and at the end the scratch file, cut to that prefix,
// becomes <etag>.incomplete again.
func (d *transfer) parallel(ctx context.Context, prefix int64) error {
	conns := int64(d.c.opts.Connections)
	minChunk := max(d.c.opts.ParallelThreshold/8, 1) // 8 MiB by default
	chunk := min(max((d.size-prefix)/(conns*4), minChunk), 8*minChunk)
	nChunks := int((d.size - prefix + chunk - 1) / chunk)
	p := &progressTracker{d: d, base: prefix, chunk: chunk, done: make([]bool, nChunks), prefix: prefix}
	if err := d.openScratch(p); err != nil {
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
	// Keep only the valid prefix, under the name any resumer (helexa or Python) knows.
	if ferr := d.closeScratch(p.prefix); ferr != nil && err == nil {
		err = ferr
	}
	d.written.Store(p.prefix)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: download interrupted (the partial file is kept and resumes next time): %w", d.what, err)
	}
	return nil
}

// openScratch moves <etag>.incomplete (prefix bytes, maybe none) to the
// scratch name, state file first, so that every crash point is recoverable.
func (d *transfer) openScratch(p *progressTracker) error {
	if err := p.save(); err != nil {
		return err
	}
	if err := os.Rename(d.part, d.scratch); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", d.what, err)
	}
	f, err := openPartial(d.scratch)
	if err != nil {
		return err
	}
	d.f = f
	return nil
}

// closeScratch cuts the scratch file to its valid prefix and renames it
// back to <etag>.incomplete, then drops the state file.
func (d *transfer) closeScratch(prefix int64) error {
	err := d.f.Truncate(prefix)
	err = errors.Join(err, d.f.Close())
	if err == nil {
		err = os.Rename(d.scratch, d.part)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", d.what, err)
	}
	os.Remove(d.statePath)
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
