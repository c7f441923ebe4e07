package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestTPSplitNeverChangesUnderUsers: a load's tp reaches the loader (the
// configured default when it does not say); asking again for the same
// split, or for none, reuses the model; another split reloads an idle model
// but is refused while others use it; a poisoned model reloads with its
// split.
func TestTPSplitNeverChangesUnderUsers(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, func(c *Config) { c.TP = 2 })
	ctx := context.Background()
	load := func(tp int) error {
		_, err := m.Load(ctx, LoadRequest{Model: "toy", TP: tp})
		return err
	}
	for _, tp := range []int{0, 2, 0} {
		if err := load(tp); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(l.tps, []int{2}) {
		t.Fatalf("loads with tp %v, want one load with the default split 2", l.tps)
	}
	gate := make(chan struct{})
	l.last().mu.Lock()
	l.last().gate = gate
	l.last().mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { complete(ctx, m, seeded("hello", 1, 3)) })
	waitFor(t, "a client in flight", func() bool { return activeOn(m, "toy") == 1 })
	if err := load(1); kindOf(err) != KindBusy {
		t.Errorf("re-split under a user: %v, want a busy error", err)
	}
	go func() {
		for range 3 {
			gate <- struct{}{}
		}
	}()
	wg.Wait()
	if err := load(1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.tps, []int{2, 1}) {
		t.Fatalf("loads with tp %v, want the idle model reloaded with tp 1", l.tps)
	}
	m.markPoisoned(m.models["toy"], context.Canceled)
	if err := load(0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.tps, []int{2, 1, 1}) {
		t.Fatalf("loads with tp %v, want the poisoned model reloaded with its split 1", l.tps)
	}
}
