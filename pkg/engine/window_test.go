package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
)

// setWindow gives the fake a sliding-window store of numBlocks blocks for
// a window of window positions. Every step then writes its tokens through
// Work.WinBlocks too and reads back every position its queries see: a
// window block freed too early (and reused by another sequence) or a
// table that does not cover the window is a violation.
func (f *fakeExec) setWindow(window, numBlocks int) {
	f.info.Window, f.info.WinNumBlocks, f.info.WinBlockBytes = window, numBlocks, 512
	f.win = make([][]int32, numBlocks)
	for i := range f.win {
		f.win[i] = slices.Repeat([]int32{-1}, f.info.BlockSize)
	}
}

// windowStep is run's window-store part (after the full store is written).
func (f *fakeExec) windowStep(w executor.Work) {
	if f.win == nil {
		return
	}
	bs, end := f.info.BlockSize, w.Pos+len(w.Tokens)
	lo := max(0, w.Pos-f.info.Window+1)
	if len(w.WinBlocks)*bs < end {
		f.violations = append(f.violations, fmt.Sprintf("window table of seq %d covers %d < %d", w.Seq, len(w.WinBlocks)*bs, end))
		return
	}
	for _, b := range w.WinBlocks[lo/bs : (end+bs-1)/bs] {
		if b < 0 || int(b) >= len(f.win) {
			f.violations = append(f.violations, fmt.Sprintf("seq %d reads window block %d at positions [%d, %d)", w.Seq, b, lo, end))
			return
		}
	}
	for i, t := range w.Tokens {
		p := w.Pos + i
		f.win[w.WinBlocks[p/bs]][p%bs] = t
	}
	for p := lo; p < end; p++ {
		if got, want := f.win[w.WinBlocks[p/bs]][p%bs], f.kv[w.Blocks[p/bs]][p%bs]; got != want {
			f.violations = append(f.violations, fmt.Sprintf("seq %d reads token %d at window position %d, the full store has %d", w.Seq, got, p, want))
		}
	}
}

// windowed loads fakes with an 8-position window over 4-position blocks and
// a window store for two sequences (what the CPU executor would size for
// NumParallel 2).
func windowed() *fakeLoader {
	return &fakeLoader{setup: func(f *fakeExec) {
		f.setWindow(8, 2*executor.WindowBlocks(8, 8, f.info.NCtx, f.info.BlockSize))
	}}
}

func (f *fakeExec) checkViolations(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.violations) > 0 {
		t.Errorf("executor violations: %v", f.violations[:min(5, len(f.violations))])
	}
}

// TestWindowStoreFreesBlocks: four concurrent streams, each running far
// past what the window store could hold if blocks were kept, finish with
// the tokens they produce alone on a model without a window store; no step
// ever reads a window position that is missing or overwritten, and every
// window block is back in the pool afterwards.
func TestWindowStoreFreesBlocks(t *testing.T) {
	prompts := []string{
		"the quick brown fox jumps over the lazy dog",
		"hello world, a somewhat longer prompt that needs several prefill chunks to finish",
		"abc",
		"a windowed model forgets what lies outside its window",
	}
	const n = 60
	want := make([][]int32, len(prompts))
	for i, p := range prompts {
		o := complete(context.Background(), newTestManager(t, &fakeLoader{}, func(c *Config) { c.NumCtx = 256 }), seeded(p, uint64(7+i), n))
		if o.err != nil || len(o.tokens) != n {
			t.Fatalf("alone %d: %v (%d tokens)", i, o.err, len(o.tokens))
		}
		want[i] = o.tokens
	}
	l := windowed()
	m := newTestManager(t, l, func(c *Config) { c.NumParallel, c.NumCtx = 4, 256 })
	got := make([]output, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() { got[i] = complete(context.Background(), m, seeded(p, uint64(7+i), n)) })
	}
	wg.Wait()
	for i := range prompts {
		if got[i].err != nil || !slices.Equal(got[i].tokens, want[i]) {
			t.Errorf("stream %d: %v, tokens %v; alone %v", i, got[i].err, got[i].tokens, want[i])
		}
	}
	ex := l.last()
	ex.checkViolations(t)
	if ex.info.WinNumBlocks*ex.info.BlockSize >= n {
		t.Fatalf("the window store holds %d positions: the test must outrun it", ex.info.WinNumBlocks*ex.info.BlockSize)
	}
	// a sequence's blocks go back to the pool just after its client has its
	// last token, as the other release tests wait for
	waitFor(t, "window blocks released", func() bool {
		s := m.Metrics()
		return s.RunningSeqs == 0 && s.Models[0].KVWindowBlocksUsed == 0
	})
	mm := m.Metrics().Models[0]
	if mm.KVWindowBlocksUsed != 0 || mm.KVWindowBlocksFree != ex.info.WinNumBlocks {
		t.Errorf("after every stream finished: %d window blocks used, %d free of %d", mm.KVWindowBlocksUsed, mm.KVWindowBlocksFree, ex.info.WinNumBlocks)
	}
}

// TestWindowStorePrefixReuse: a follow-up turn reuses the cached prefix,
// whose full-store blocks and window tail are both cached, and gives what
// a fresh model gives; once the tail has been evicted by other requests, a
// turn either reuses less or nothing, and is still exact.
func TestWindowStorePrefixReuse(t *testing.T) {
	l := windowed()
	m := newTestManager(t, l, nil)
	ctx := context.Background()
	first := "system: you are a helpful toy model. user: hi"
	a := complete(ctx, m, seeded(first, 1, 10))
	if a.err != nil {
		t.Fatal(a.err)
	}
	second := first + a.text + " user: and now?"
	b := complete(ctx, m, seeded(second, 2, 10))
	promptA, _ := newFakeTok().Encode(first, true, true)
	if b.err != nil || b.res.Usage.CachedTokens < len(promptA)/4*4 {
		t.Fatalf("second turn: %v, %d cached tokens, want at least %d", b.err, b.res.Usage.CachedTokens, len(promptA)/4*4)
	}
	ex := l.last()
	ex.mu.Lock()
	var firstWork executor.Work
	for _, w := range ex.works {
		if w.Pos == b.res.Usage.CachedTokens && len(w.History) > 0 {
			firstWork = w
		}
	}
	ex.mu.Unlock()
	if firstWork.Tokens == nil {
		t.Fatal("no work resumed the cached prefix")
	}
	fresh := func(prompt string, seed uint64) []int32 {
		return complete(ctx, newTestManager(t, &fakeLoader{}, nil), seeded(prompt, seed, 10)).tokens
	}
	if want := fresh(second, 2); !slices.Equal(b.tokens, want) {
		t.Errorf("with cached prefix %v, fresh %v", b.tokens, want)
	}
	// Other long requests evict the idle window tail.
	for i := range 3 {
		if o := complete(ctx, m, seeded(fmt.Sprintf("unrelated request %d with its own long text", i), 9, 40)); o.err != nil {
			t.Fatal(o.err)
		}
	}
	third := second + b.text + " user: once more"
	c := complete(ctx, m, seeded(third, 3, 10))
	if c.err != nil {
		t.Fatal(c.err)
	}
	if want := fresh(third, 3); !slices.Equal(c.tokens, want) {
		t.Errorf("third turn %v (%d cached), fresh %v", c.tokens, c.res.Usage.CachedTokens, want)
	}
	ex.checkViolations(t)
}

// TestWindowStoreShrinksChunk: a window store too small for one sequence
// at the configured prefill budget makes the scheduler prefill in smaller
// chunks instead of refusing every request.
func TestWindowStoreShrinksChunk(t *testing.T) {
	info := executor.Info{NCtx: 128, BlockSize: 4, Window: 8, WinNumBlocks: executor.WindowBlocks(8, 1, 128, 4)}
	w := newWinStore(info, 8)
	if w.chunk != 1 || w.perSeq > info.WinNumBlocks {
		t.Errorf("chunk %d, %d blocks per sequence in a store of %d", w.chunk, w.perSeq, info.WinNumBlocks)
	}
	l := &fakeLoader{setup: func(f *fakeExec) { f.setWindow(8, info.WinNumBlocks) }}
	m := newTestManager(t, l, nil)
	o := complete(context.Background(), m, seeded("a prompt of a good many tokens for small chunks", 4, 20))
	alone := complete(context.Background(), newTestManager(t, &fakeLoader{}, nil), seeded("a prompt of a good many tokens for small chunks", 4, 20))
	if o.err != nil || !slices.Equal(o.tokens, alone.tokens) {
		t.Errorf("%v: tokens %v, without a window store %v", o.err, o.tokens, alone.tokens)
	}
	l.last().checkViolations(t)
}
