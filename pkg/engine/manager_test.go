package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

func newTestManager(t *testing.T, l *fakeLoader, mod func(*Config)) *Manager {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ChunkSize = 8
	cfg.NumCtx = 128
	cfg.KeepAlive = -1
	if mod != nil {
		mod(&cfg)
	}
	m := NewManager(cfg, l, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

type output struct {
	tokens []int32
	text   string
	reason string
	deltas []Delta
	res    Result
	err    error
}

func complete(ctx context.Context, m *Manager, req CompletionRequest) output {
	var o output
	o.res, o.err = m.Complete(ctx, req, func(d Delta) error {
		o.deltas = append(o.deltas, d)
		o.text += d.Content
		for _, ti := range d.Tokens {
			o.tokens = append(o.tokens, ti.ID)
		}
		return nil
	})
	o.reason = o.res.FinishReason
	return o
}

func seeded(prompt string, seed uint64, maxTokens int) CompletionRequest {
	return CompletionRequest{Model: "toy", Prompt: prompt, AddSpecial: true, Options: Options{
		Sampling:  sampling.Params{Temperature: 0.9, Seed: seed},
		MaxTokens: maxTokens,
	}}
}

func kindOf(err error) Kind {
	var re *Error
	if errors.As(err, &re) {
		return re.Kind
	}
	return ""
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func activeOn(m *Manager, model string) int {
	ps, _ := m.PS(context.Background())
	for _, s := range ps {
		if s.Name == model {
			return s.Active
		}
	}
	return -1
}

func TestConcurrentSeededStreamsMatchAlone(t *testing.T) {
	prompts := []string{
		"the quick brown fox jumps over the lazy dog",
		"the quick brown fox jumps over the lazy cat and more",
		"hello world, a somewhat longer prompt that needs several prefill chunks to finish",
		"abc",
		"tiny",
		"the quick brown fox",
	}
	want := make([][]int32, len(prompts))
	for i, p := range prompts {
		m := newTestManager(t, &fakeLoader{}, nil)
		o := complete(context.Background(), m, seeded(p, uint64(100+i), 24))
		if o.err != nil {
			t.Fatalf("alone %d: %v", i, o.err)
		}
		want[i] = o.tokens
	}

	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) { f.gate = gate }}
	m := newTestManager(t, l, func(c *Config) { c.NumParallel = 4 })
	// Load first (no step runs), then start every stream while the first
	// step is held, so they all join the batch.
	if _, err := m.Load(context.Background(), LoadRequest{Model: "toy"}); err != nil {
		t.Fatal(err)
	}
	got := make([]output, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() { got[i] = complete(context.Background(), m, seeded(p, uint64(100+i), 24)) })
	}
	waitFor(t, "all requests active", func() bool { return activeOn(m, "toy") == len(prompts) })
	done := make(chan struct{})
	go func() {
		for {
			select {
			case gate <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	for i := range prompts {
		if got[i].err != nil {
			t.Fatalf("stream %d: %v", i, got[i].err)
		}
		if !slices.Equal(got[i].tokens, want[i]) {
			t.Errorf("stream %d: concurrent tokens %v, alone %v", i, got[i].tokens, want[i])
		}
	}
	ex := l.last()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.maxBatch < 2 {
		t.Errorf("max batch %d: streams were not batched", ex.maxBatch)
	}
	if len(ex.violations) > 0 {
		t.Errorf("executor violations: %v", ex.violations)
	}
	for _, w := range ex.works {
		if len(w.Tokens) > 8 {
			t.Fatalf("a work item fed %d tokens, over the chunk size 8", len(w.Tokens))
		}
	}
}

func TestPrefixCacheReusesSharedPrefix(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	ctx := context.Background()
	first := "system: you are a helpful toy model. user: hi"
	a := complete(ctx, m, seeded(first, 1, 10))
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.res.Usage.CachedTokens != 0 {
		t.Fatalf("first request cached %d tokens, want 0", a.res.Usage.CachedTokens)
	}
	ex := l.last()
	ex.mu.Lock()
	fedBefore, worksBefore := ex.fed, len(ex.works)
	ex.mu.Unlock()

	// A follow-up turn: the first prompt, its answer and a new message.
	second := first + a.text + " user: and now?"
	b := complete(ctx, m, seeded(second, 2, 10))
	if b.err != nil {
		t.Fatal(b.err)
	}
	promptA, _ := newFakeTok().Encode(first, true, true)
	promptB, _ := newFakeTok().Encode(second, true, true)
	cached := b.res.Usage.CachedTokens
	if cached < len(promptA)/4*4 {
		t.Fatalf("second request cached %d tokens, want at least %d (the first prompt's full blocks)", cached, len(promptA)/4*4)
	}
	ex.mu.Lock()
	works := ex.works[worksBefore:]
	prefilled := 0
	for _, w := range works {
		if w.Pos < len(promptB) {
			prefilled += len(w.Tokens)
		}
	}
	fed := ex.fed - fedBefore
	ex.mu.Unlock()
	if prefilled != len(promptB)-cached {
		t.Errorf("prefilled %d tokens, want %d (prompt %d - cached %d)", prefilled, len(promptB)-cached, len(promptB), cached)
	}
	if works[0].Pos != cached || len(works[0].History) != cached {
		t.Errorf("first step at pos %d with %d history tokens, want %d", works[0].Pos, len(works[0].History), cached)
	}
	if fed >= len(promptB) {
		t.Errorf("fed %d tokens for a %d-token prompt with a cached prefix", fed, len(promptB))
	}
	// The reused KV must give exactly what a fresh model gives.
	fresh := complete(ctx, newTestManager(t, &fakeLoader{}, nil), seeded(second, 2, 10))
	if !slices.Equal(fresh.tokens, b.tokens) {
		t.Errorf("with cached prefix %v, fresh %v", b.tokens, fresh.tokens)
	}
	if got := m.Metrics().CachedTokens; got != int64(cached) {
		t.Errorf("metrics cached tokens %d, want %d", got, cached)
	}
}

func TestCancelMidStreamFreesSequence(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	alone := complete(context.Background(), newTestManager(t, &fakeLoader{}, nil), seeded("other stream", 5, 40))

	var wg sync.WaitGroup
	var other output
	wg.Go(func() { other = complete(context.Background(), m, seeded("other stream", 5, 40)) })

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := m.Complete(ctx, seeded("cancel me please", 9, 0), func(d Delta) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || res.FinishReason != "cancelled" {
		t.Fatalf("got %q, %v; want cancelled, context.Canceled", res.FinishReason, err)
	}
	wg.Wait()
	if other.err != nil || !slices.Equal(other.tokens, alone.tokens) {
		t.Errorf("the other stream was disturbed: %v, %v vs %v", other.err, other.tokens, alone.tokens)
	}
	ex := l.last()
	waitFor(t, "sequences freed", func() bool { return ex.liveSeqs() == 0 })
	waitFor(t, "blocks released", func() bool {
		s := m.Metrics()
		return s.KVBlocksUsed == 0 && s.RunningSeqs == 0
	})
	if st := m.Metrics().Models[0].State; st != StateReady {
		t.Errorf("state %q after cancel, want ready", st)
	}

	// A callback error cancels too, and is returned.
	boom := errors.New("client went away")
	_, err = m.Complete(context.Background(), seeded("x", 1, 0), func(Delta) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("callback error: got %v", err)
	}
	waitFor(t, "sequences freed", func() bool { return ex.liveSeqs() == 0 })
}

func TestQueueFullIsBusy(t *testing.T) {
	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) { f.gate = gate }}
	m := newTestManager(t, l, func(c *Config) { c.NumParallel = 1; c.MaxQueue = 1 })
	if _, err := m.Load(context.Background(), LoadRequest{Model: "toy"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { errs[i] = complete(context.Background(), m, seeded("hold", uint64(i), 3)).err })
	}
	waitFor(t, "two requests in flight", func() bool { return activeOn(m, "toy") == 2 })
	o := complete(context.Background(), m, seeded("third", 3, 3))
	if kindOf(o.err) != KindBusy {
		t.Fatalf("third request: %v, want KindBusy", o.err)
	}
	if !strings.Contains(o.err.Error(), "HELEXA_MAX_QUEUE") {
		t.Errorf("busy message does not name the knob: %v", o.err)
	}
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	if got := m.Metrics().Requests["busy"]; got != 1 {
		t.Errorf("busy count %d, want 1", got)
	}
}

func TestPreflight(t *testing.T) {
	tests := []struct {
		name   string
		loader *fakeLoader
		req    CompletionRequest
		kind   Kind
		words  []string
	}{
		{"prompt longer than context", &fakeLoader{nctx: 32},
			seeded(strings.Repeat("x", 40), 1, 1), KindContextLength, []string{"41 tokens", "32 tokens"}},
		{"prompt exactly fills context", &fakeLoader{nctx: 32},
			seeded(strings.Repeat("x", 31), 1, 1), KindContextLength, []string{"32 tokens"}},
		{"KV does not fit", &fakeLoader{nctx: 64, bs: 4, nblk: 4},
			seeded("0123456789", 1, 20), KindNoMemory, []string{"max_tokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, tt.loader, nil)
			o := complete(context.Background(), m, tt.req)
			if kindOf(o.err) != tt.kind {
				t.Fatalf("got %v, want kind %s", o.err, tt.kind)
			}
			for _, w := range tt.words {
				if !strings.Contains(o.err.Error(), w) {
					t.Errorf("message %q does not mention %q", o.err, w)
				}
			}
			if steps := tt.loader.last().steps; steps != 0 {
				t.Errorf("%d steps ran before the refusal", steps)
			}
		})
	}
}

func TestPoisonFailsInFlightAndRecovers(t *testing.T) {
	fail := true
	var mu sync.Mutex
	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			f.gate = gate
			f.failStep = func(step int) error {
				if step == 4 {
					return errors.New("illegal memory access")
				}
				return nil
			}
			fail = false
		}
	}}
	m := newTestManager(t, l, nil)
	var wg sync.WaitGroup
	outs := make([]output, 3)
	for i := range outs {
		wg.Go(func() { outs[i] = complete(context.Background(), m, seeded("poison me", uint64(i), 50)) })
	}
	waitFor(t, "all three requests in flight", func() bool { return activeOn(m, "toy") == 3 })
	stepper := make(chan struct{})
	go func() { // release the gated steps until the fault
		for {
			select {
			case gate <- struct{}{}:
			case <-stepper:
				return
			}
		}
	}()
	wg.Wait()
	close(stepper)
	for i, o := range outs {
		if kindOf(o.err) != KindPoisoned || !strings.Contains(o.err.Error(), "the next request for it loads it again") {
			t.Errorf("in-flight request %d: %v, want poisoned naming the recovery", i, o.err)
		}
	}
	ps, _ := m.PS(context.Background())
	if len(ps) != 1 || ps[0].State != StatePoisoned || !strings.Contains(ps[0].Error, "illegal memory access") {
		t.Fatalf("ps after the fault: %+v", ps)
	}
	// The next request reloads the model (automatic recovery).
	o := complete(context.Background(), m, seeded("again", 1, 5))
	if o.err != nil || len(o.tokens) == 0 {
		t.Fatalf("request after the fault: %v (%d tokens), want the model reloaded", o.err, len(o.tokens))
	}
	if l.loads != 2 {
		t.Errorf("%d loads, want 2", l.loads)
	}
}

func TestSequenceErrorDoesNotPoison(t *testing.T) {
	l := &fakeLoader{setup: func(f *fakeExec) {
		f.seqErr = func(p sampling.Params) error {
			if p.Seed == 13 {
				return errors.New("sampler panic: NaN logits")
			}
			return nil
		}
	}}
	m := newTestManager(t, l, nil)
	var wg sync.WaitGroup
	var bad, good output
	wg.Go(func() { bad = complete(context.Background(), m, seeded("unlucky", 13, 10)) })
	wg.Go(func() { good = complete(context.Background(), m, seeded("lucky", 14, 10)) })
	wg.Wait()
	if bad.err == nil || kindOf(bad.err) == KindPoisoned {
		t.Errorf("bad sequence: %v, want its own error", bad.err)
	}
	if good.err != nil {
		t.Errorf("good sequence: %v", good.err)
	}
	// Bad sampling parameters are the request's fault too.
	o := complete(context.Background(), m, CompletionRequest{Model: "toy", Prompt: "x",
		Options: Options{Sampling: sampling.Params{Temperature: -1}}})
	if kindOf(o.err) != KindBadRequest {
		t.Errorf("negative temperature: %v, want bad request", o.err)
	}
	ps, _ := m.PS(context.Background())
	if ps[0].State != StateReady {
		t.Errorf("state %q, want ready", ps[0].State)
	}
}

func TestKeepAlive(t *testing.T) {
	ctx := context.Background()
	dur := func(d time.Duration) *time.Duration { return &d }
	m := newTestManager(t, &fakeLoader{}, func(c *Config) { c.KeepAlive = time.Hour })

	req := seeded("x", 1, 2)
	req.Options.KeepAlive = dur(0)
	if o := complete(ctx, m, req); o.err != nil {
		t.Fatal(o.err)
	}
	if ps, _ := m.PS(ctx); len(ps) != 0 {
		t.Fatalf("keep_alive 0 left %+v loaded", ps)
	}

	if o := complete(ctx, m, seeded("x", 1, 2)); o.err != nil {
		t.Fatal(o.err)
	}
	ps, _ := m.PS(ctx)
	if len(ps) != 1 || time.Until(ps[0].ExpiresAt) < 50*time.Minute {
		t.Fatalf("default keep-alive: %+v", ps)
	}

	if _, err := m.Load(ctx, LoadRequest{Model: "toy", KeepAlive: dur(-1)}); err != nil {
		t.Fatal(err)
	}
	if ps, _ := m.PS(ctx); !ps[0].ExpiresAt.IsZero() {
		t.Fatalf("negative keep-alive expires at %v", ps[0].ExpiresAt)
	}

	req.Options.KeepAlive = dur(20 * time.Millisecond)
	if o := complete(ctx, m, req); o.err != nil {
		t.Fatal(o.err)
	}
	waitFor(t, "idle unload", func() bool { ps, _ := m.PS(ctx); return len(ps) == 0 })
}

func TestMaxLoadedModelsEvictsIdle(t *testing.T) {
	ctx := context.Background()
	m := newTestManager(t, &fakeLoader{}, func(c *Config) { c.MaxLoadedModels = 2 })
	for _, name := range []string{"a", "b", "c"} {
		if _, err := m.Load(ctx, LoadRequest{Model: name}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	ps, _ := m.PS(ctx)
	var names []string
	for _, s := range ps {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"b", "c"}) {
		t.Errorf("loaded %v, want [b c] (a evicted as least recently used)", names)
	}
	_, err := m.Load(ctx, LoadRequest{Model: "missing-model"})
	if kindOf(err) != KindNotFound {
		t.Errorf("missing model: %v", err)
	}
}

func TestMemoryAwareEviction(t *testing.T) {
	ctx := context.Background()
	free := int64(100)
	l := &estimatingLoader{fakeLoader: &fakeLoader{}, need: 80}
	m := newTestManager(t, l.fakeLoader, nil)
	m.loader = l
	m.cfg.FreeMemory = func() int64 { return free }
	if _, err := m.Load(ctx, LoadRequest{Model: "a"}); err != nil {
		t.Fatal(err)
	}
	free = 30 // a takes memory
	if _, err := m.Load(ctx, LoadRequest{Model: "b"}); err != nil {
		t.Fatal(err)
	}
	ps, _ := m.PS(ctx)
	if len(ps) != 1 || ps[0].Name != "b" {
		t.Errorf("loaded %+v, want only b (a evicted for memory)", ps)
	}
}

type estimatingLoader struct {
	*fakeLoader
	need int64
}

func (e *estimatingLoader) EstimateBytes(context.Context, string, LoadOptions) (int64, error) {
	return e.need, nil
}

func TestMetricsSnapshot(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	for i := range 3 {
		if o := complete(context.Background(), m, seeded(fmt.Sprint("metrics ", i), uint64(i), 8)); o.err != nil {
			t.Fatal(o.err)
		}
	}
	s := m.Metrics()
	if s.Requests["length"]+s.Requests["stop"] != 3 || s.GeneratedTokens == 0 || s.PromptTokens == 0 {
		t.Errorf("counters %+v", s)
	}
	if s.DecodeTokensPerSec <= 0 || s.PrefillTokensPerSec <= 0 {
		t.Errorf("rates %v %v", s.PrefillTokensPerSec, s.DecodeTokensPerSec)
	}
	if len(s.Models) != 1 || s.Models[0].State != StateReady || s.KVBlocksFree == 0 {
		t.Errorf("gauges %+v", s)
	}
}

func TestUnloadMidRequestIsNotPoison(t *testing.T) {
	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) { f.gate = gate }}
	m := newTestManager(t, l, nil)
	if _, err := m.Load(context.Background(), LoadRequest{Model: "toy"}); err != nil {
		t.Fatal(err)
	}
	var o output
	done := make(chan struct{})
	go func() { o = complete(context.Background(), m, seeded("x", 1, 5)); close(done) }()
	waitFor(t, "request active", func() bool { return activeOn(m, "toy") == 1 })
	if err := m.Unload(context.Background(), "toy"); err != nil {
		t.Fatal(err)
	}
	<-done
	if kindOf(o.err) != KindBusy || !strings.Contains(o.err.Error(), "unloaded") {
		t.Errorf("request on an unloaded model: %v", o.err)
	}
	if !l.last().closed {
		t.Error("executor not closed")
	}
	if ps, _ := m.PS(context.Background()); len(ps) != 0 {
		t.Errorf("still loaded: %+v", ps)
	}
}

// TestLoadErrorKinds: a load the device cannot hold (the GPU runner's
// pre-flight, across the RPC as an executor error) is insufficient
// memory, 503, not an internal error.
func TestLoadErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Kind
	}{
		{executor.Errorf(executor.KindNoMemory, "the weights take 9 GiB and the GPU has 4 GiB free"), KindNoMemory},
		{fmt.Errorf("opening: %w", executor.Errorf(executor.KindNoMemory, "no room")), KindNoMemory},
		{errors.New("a corrupt file"), KindInternal},
		{Errorf(KindBadRequest, "bad"), KindBadRequest},
	} {
		var re *Error
		if err := loadError("m", tc.err); !errors.As(err, &re) || re.Kind != tc.want {
			t.Errorf("loadError(%v) = %v, want kind %s", tc.err, err, tc.want)
		}
	}
}
