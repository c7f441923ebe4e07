package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

func TestLongPrefillDoesNotFreezeDecoding(t *testing.T) {
	gate := make(chan struct{})
	l := &fakeLoader{setup: func(f *fakeExec) { f.gate = gate }}
	m := newTestManager(t, l, func(c *Config) { c.NumCtx = 512 })
	started, bActive, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(stop)
	go func() { // three steps for a (prefill, two decodes), then b joins
		for range 3 {
			select {
			case gate <- struct{}{}:
			case <-stop:
				return
			}
		}
		select {
		case <-bActive:
		case <-stop:
			return
		}
		for {
			select {
			case gate <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	var a, b output
	var wg sync.WaitGroup
	wg.Go(func() {
		n := 0
		_, a.err = m.Complete(context.Background(), seeded("a", 1, 300), func(Delta) error {
			if n++; n == 2 {
				close(started)
			}
			return nil
		})
	})
	<-started
	long := strings.Repeat("0123456789", 20) // 200 tokens: 25 chunks of 8
	wg.Go(func() { b = complete(context.Background(), m, seeded(long, 2, 2)) })
	waitFor(t, "the long prompt in flight", func() bool { return activeOn(m, "toy") == 2 })
	close(bActive)
	wg.Wait()
	if a.err != nil || b.err != nil {
		t.Fatal(a.err, b.err)
	}
	ex := l.last()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	prefillSteps := 0
	for _, batch := range ex.batches {
		var prefilling, decodingA bool
		for _, w := range batch {
			switch {
			case w.Seq == 2 && w.Pos < 201:
				prefilling = true
			case w.Seq == 1 && len(w.Tokens) == 1:
				decodingA = true
			}
		}
		if prefilling {
			prefillSteps++
			if !decodingA {
				t.Fatalf("a prefill step of the long prompt did not advance the running stream: %+v", batch)
			}
		}
	}
	if prefillSteps < 25 {
		t.Errorf("long prompt prefilled in %d steps, want >= 25 chunks", prefillSteps)
	}
}
