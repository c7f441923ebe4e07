package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// TestSlowConsumerDoesNotStallTheBatch: a caller that stops reading its
// stream (a slow client) neither stalls the other sequences nor its own:
// the scheduler queues its output and moves on, and frees its sequence
// when it is done.
func TestSlowConsumerDoesNotStallTheBatch(t *testing.T) {
	reqA, reqB := seeded("slow reader", 1, 30), seeded("fast reader", 2, 30)
	ref := newTestManager(t, &fakeLoader{}, nil)
	aloneA, aloneB := complete(context.Background(), ref, reqA), complete(context.Background(), ref, reqB)

	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	blocked, release := make(chan struct{}), make(chan struct{})
	var a output
	var wg sync.WaitGroup
	wg.Go(func() {
		first := true
		a.res, a.err = m.Complete(context.Background(), reqA, func(d Delta) error {
			if first {
				first = false
				close(blocked)
				<-release // the client stops reading
			}
			for _, ti := range d.Tokens {
				a.tokens = append(a.tokens, ti.ID)
			}
			return nil
		})
	})
	<-blocked
	b := complete(context.Background(), m, reqB)
	if b.err != nil || !slices.Equal(b.tokens, aloneB.tokens) {
		t.Errorf("the other stream while one reader is stuck: %v, %v, want %v", b.err, b.tokens, aloneB.tokens)
	}
	ex := l.last()
	waitFor(t, "the stuck reader's sequence to finish and be freed", func() bool { return ex.liveSeqs() == 0 })
	close(release)
	wg.Wait()
	if a.err != nil || !slices.Equal(a.tokens, aloneA.tokens) {
		t.Errorf("the slow reader: %v, %v, want %v", a.err, a.tokens, aloneA.tokens)
	}
}

// TestPreflightLazyKVMemory: an executor that allocates KV on demand
// refuses, before any compute, a request whose KV does not fit in free
// memory (503, naming what is needed and what is free).
func TestPreflightLazyKVMemory(t *testing.T) {
	tests := []struct {
		name      string
		free      int64
		maxTokens int
		kind      Kind
	}{
		{"fits", 1 << 20, 8, ""},
		{"does not fit", 3 * 1024, 40, KindNoMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &fakeLoader{setup: func(f *fakeExec) {
				f.mem.KVBytes = 0 // nothing allocated up front
				f.mem.FreeBytes = tt.free
			}}
			m := newTestManager(t, l, nil)
			o := complete(context.Background(), m, seeded("a prompt of some length", 1, tt.maxTokens))
			if kindOf(o.err) != tt.kind {
				t.Fatalf("got %v, want kind %q", o.err, tt.kind)
			}
			if tt.kind == "" {
				return
			}
			if !strings.Contains(o.err.Error(), "KiB more but only 3.0 KiB is free") {
				t.Errorf("message %q does not say what is needed and free", o.err)
			}
			if steps := l.last().steps; steps != 0 {
				t.Errorf("%d steps ran before the refusal", steps)
			}
		})
	}
}

// TestCancelRemovesSequenceBetweenSteps: a cancelled request leaves the
// batch at the next step boundary (its step in progress completes), its
// executor sequence and KV blocks are freed, and the model stays ready.
func TestCancelRemovesSequenceBetweenSteps(t *testing.T) {
	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) { f.gate = gate }}
	m := newTestManager(t, l, nil)
	if _, err := m.Load(context.Background(), LoadRequest{Model: "toy"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var o output
	done := make(chan struct{})
	go func() { o = complete(ctx, m, seeded("cancel me", 1, 100)); close(done) }()
	for range 5 { // prefill and four decode steps
		gate <- struct{}{}
	}
	cancel()
	stepper := make(chan struct{})
	defer close(stepper)
	go func() {
		for {
			select {
			case gate <- struct{}{}:
			case <-stepper:
				return
			}
		}
	}()
	<-done
	if o.reason != "cancelled" || !errors.Is(o.err, context.Canceled) {
		t.Errorf("got %q, %v; want cancelled", o.reason, o.err)
	}
	ex := l.last()
	waitFor(t, "the sequence freed", func() bool { return ex.liveSeqs() == 0 })
	waitFor(t, "its blocks released", func() bool { s := m.Metrics(); return s.KVBlocksUsed == 0 && s.RunningSeqs == 0 })
	ex.mu.Lock()
	steps := ex.steps
	ex.mu.Unlock()
	if steps > 7 {
		t.Errorf("%d steps ran for a request cancelled after 5", steps)
	}
	if ps, _ := m.PS(context.Background()); len(ps) != 1 || ps[0].State != StateReady {
		t.Errorf("after the cancel: %+v", ps)
	}
}

// hostMemory is a shared "free memory" that loaded fake models take from
// and give back when closed.
type hostMemory struct {
	mu   sync.Mutex
	free int64
}

func (h *hostMemory) add(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.free += n
}

func (h *hostMemory) get() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.free
}

// memExec reports the host's live free memory and returns its share on Close.
type memExec struct {
	*fakeExec
	host *hostMemory
	size int64
}

func (e memExec) Memory() executor.MemoryInfo {
	mem := e.fakeExec.Memory()
	mem.FreeBytes = e.host.get()
	return mem
}

func (e memExec) Close() error {
	e.host.add(e.size)
	return e.fakeExec.Close()
}

// TestMemoryEvictionUsesLiveReadings: with no Config.FreeMemory, the free
// memory is read afresh from a loaded executor before each eviction, so
// only as many idle models are evicted as the new one needs (a reading
// taken when a model loaded would be stale).
func TestMemoryEvictionUsesLiveReadings(t *testing.T) {
	host := &hostMemory{free: 100}
	l := &fakeLoader{}
	wrap := wrapLoader{l, func(md *Model) {
		host.add(-40) // each model takes 40
		md.Executor = memExec{md.Executor.(*fakeExec), host, 40}
	}}
	m := newTestManager(t, l, nil)
	m.loader = estimatingWrap{wrap, 40}
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} { // c needs a to go (free 20 < 40)
		if _, err := m.Load(ctx, LoadRequest{Model: name}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct last-use times
	}
	ps, _ := m.PS(ctx)
	var names []string
	for _, st := range ps {
		names = append(names, st.Name)
	}
	if !slices.Equal(names, []string{"b", "c"}) {
		t.Errorf("loaded %v, want [b c]: only the least recently used model evicted", names)
	}
	if got := host.get(); got != 20 {
		t.Errorf("free memory %d, want 20", got)
	}
}

// estimatingWrap adds a size estimate to a wrapLoader.
type estimatingWrap struct {
	wrapLoader
	need int64
}

func (e estimatingWrap) EstimateBytes(context.Context, string, LoadOptions) (int64, error) {
	return e.need, nil
}
