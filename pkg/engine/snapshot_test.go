package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
)

// fakeSnaps makes the fake a recurrent model that keeps state snapshots:
// it records each saved snapshot's position and checks that a sequence
// starts at position 0 or restores a live snapshot at its position.
type fakeSnaps struct {
	pos     map[uint64]int
	started map[executor.SeqID]bool
	most    int // the most snapshots held at once
}

func (f *fakeExec) setSnapshots() {
	f.info.Recurrent, f.info.StateSnapshots, f.info.StateBytes = true, true, 1<<10
	f.snaps = &fakeSnaps{pos: map[uint64]int{}, started: map[executor.SeqID]bool{}}
}

// snapshotStep is run's snapshot part (before the KV is written).
func (f *fakeExec) snapshotStep(w executor.Work) {
	s := f.snaps
	if s == nil {
		return
	}
	first := !s.started[w.Seq]
	s.started[w.Seq] = true
	switch pos, ok := s.pos[w.LoadState]; {
	case w.LoadState != 0 && (!ok || pos != w.Pos || !first):
		f.violations = append(f.violations, fmt.Sprintf("seq %d restores snapshot %d (live %v at %d) at position %d, first work %v", w.Seq, w.LoadState, ok, pos, w.Pos, first))
	case w.LoadState == 0 && first && w.Pos != 0:
		f.violations = append(f.violations, fmt.Sprintf("seq %d starts at position %d without a state snapshot", w.Seq, w.Pos))
	}
	if w.SaveState != 0 {
		s.pos[w.SaveState] = w.Pos + len(w.Tokens)
		s.most = max(s.most, len(s.pos))
	}
}

// dropSnapshots frees the snapshots a step names, before its works run.
func (f *fakeExec) dropSnapshots(batch []executor.Work) {
	if f.snaps == nil {
		return
	}
	for _, w := range batch {
		for _, k := range w.DropStates {
			delete(f.snaps.pos, k)
		}
	}
}

// TestStateSnapshotsResumeChats: with a recurrent model that keeps state
// snapshots, each chat's second turn resumes from the snapshot of its
// first turn's prompt while it is cached; the scheduler keeps at most
// NumParallel snapshots, dropping the least recently used, and a turn
// whose snapshot was dropped prefills from the start; every turn equals a
// fresh model's.
func TestStateSnapshotsResumeChats(t *testing.T) {
	l := &fakeLoader{setup: func(f *fakeExec) { f.setSnapshots() }}
	m := newTestManager(t, l, func(c *Config) { c.NumParallel = 2 })
	ctx := context.Background()
	fresh := func(prompt string) []int32 {
		return complete(ctx, newTestManager(t, &fakeLoader{}, nil), seeded(prompt, 3, 6)).tokens
	}
	var seconds []string
	for i := range 4 {
		first := fmt.Sprintf("chat %d: %s", i, strings.Repeat("a system prompt of some length. ", 2))
		a := complete(ctx, m, seeded(first, 3, 6))
		second := first + a.text + " and then?"
		seconds = append(seconds, second)
		b := complete(ctx, m, seeded(second, 3, 6))
		if a.err != nil || b.err != nil || b.res.Usage.CachedTokens == 0 {
			t.Fatalf("chat %d: %v, %v, second turn cached %d tokens", i, a.err, b.err, b.res.Usage.CachedTokens)
		}
		if want := fresh(second); !slices.Equal(b.tokens, want) {
			t.Errorf("chat %d: second turn %v, fresh %v", i, b.tokens, want)
		}
	}
	// chat 0's snapshots were dropped three chats ago
	again := complete(ctx, m, seeded(seconds[0]+" more", 3, 6))
	if again.err != nil || again.res.Usage.CachedTokens != 0 || !slices.Equal(again.tokens, fresh(seconds[0]+" more")) {
		t.Errorf("a turn whose snapshot was dropped: %v, %d cached tokens", again.err, again.res.Usage.CachedTokens)
	}
	ex := l.last()
	ex.checkViolations(t)
	if ex.snaps.most > 2 {
		t.Errorf("the executor held %d snapshots at once, over NumParallel 2", ex.snaps.most)
	}
}
