package engine

import (
	"context"
	"sync"
	"testing"
)

// resolvingLoader is a fakeLoader whose names resolve unless they start
// with "missing".
type resolvingLoader struct{ fakeLoader }

func (l *resolvingLoader) Resolve(_ context.Context, name string) error {
	if len(name) >= 7 && name[:7] == "missing" {
		return Errorf(KindNotFound, "model %q not found", name)
	}
	return nil
}

// TestNumCtxNeverDegradesASharedModel: a request asking for a smaller
// context reuses the loaded model (no reload, its context unchanged); a
// larger context reloads only an idle model, and a busy one serves with
// the context it has, saying so in Usage.Context.
func TestNumCtxNeverDegradesASharedModel(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, func(c *Config) { c.NumCtx = 64 })
	req := func(numCtx int) CompletionRequest {
		r := seeded("hello", 1, 3)
		r.Options.NumCtx = numCtx
		return r
	}
	if o := complete(context.Background(), m, req(128)); o.err != nil || o.res.Usage.Context != 128 {
		t.Fatalf("first request: %v, context %d", o.err, o.res.Usage.Context)
	}
	if o := complete(context.Background(), m, req(16)); o.err != nil || o.res.Usage.Context != 128 || l.loads != 1 {
		t.Fatalf("a smaller num_ctx: %v, context %d, %d loads; want the loaded 128-token model reused", o.err, o.res.Usage.Context, l.loads)
	}
	// A busy model is not reloaded for a larger context.
	gate := make(chan struct{})
	l.last().mu.Lock()
	l.last().gate = gate
	l.last().mu.Unlock()
	var wg sync.WaitGroup
	var first output
	wg.Go(func() { first = complete(context.Background(), m, req(0)) })
	waitFor(t, "the first client in flight", func() bool { return activeOn(m, "toy") == 1 })
	var big output
	wg.Go(func() { big = complete(context.Background(), m, req(256)) })
	waitFor(t, "both clients in flight", func() bool { return activeOn(m, "toy") == 2 })
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case gate <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if first.err != nil || big.err != nil || big.res.Usage.Context != 128 || l.loads != 1 {
		t.Fatalf("busy model: %v / %v, context %d, %d loads; want it served as loaded", first.err, big.err, big.res.Usage.Context, l.loads)
	}
	// Idle again: a larger context reloads.
	if o := complete(context.Background(), m, req(256)); o.err != nil || o.res.Usage.Context != 256 || l.loads != 2 {
		t.Fatalf("idle model, larger num_ctx: %v, context %d, %d loads", o.err, o.res.Usage.Context, l.loads)
	}
}

// TestBogusNameNeverEvicts: with the registry full, a name that does not
// resolve fails without unloading the loaded model.
func TestBogusNameNeverEvicts(t *testing.T) {
	l := &resolvingLoader{}
	m := newTestManager(t, &l.fakeLoader, func(c *Config) { c.MaxLoadedModels = 1 })
	m.loader = l
	if o := complete(context.Background(), m, seeded("hi", 1, 2)); o.err != nil {
		t.Fatal(o.err)
	}
	bogus := seeded("hi", 1, 2)
	bogus.Model = "missing/model"
	if o := complete(context.Background(), m, bogus); kindOf(o.err) != KindNotFound {
		t.Fatalf("bogus model: %v", o.err)
	}
	if ps, _ := m.PS(context.Background()); len(ps) != 1 || ps[0].Name != "toy" {
		t.Fatalf("after a bogus name: %+v, want toy still loaded", ps)
	}
	other := seeded("hi", 1, 2)
	other.Model = "other"
	if o := complete(context.Background(), m, other); o.err != nil {
		t.Fatal(o.err)
	}
	if ps, _ := m.PS(context.Background()); len(ps) != 1 || ps[0].Name != "other" {
		t.Fatalf("a real model evicts the idle one: %+v", ps)
	}
}
