package loader

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

// feedWatch records every token the scheduler feeds each sequence.
type feedWatch struct {
	executor.Executor
	mu  sync.Mutex
	fed map[executor.SeqID][]int32
}

func (f *feedWatch) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	f.mu.Lock()
	for _, w := range batch {
		cur := f.fed[w.Seq]
		if len(cur) < w.Pos { // a cached prefix
			cur = slices.Clone(w.History)
		}
		f.fed[w.Seq] = append(cur[:w.Pos:w.Pos], w.Tokens...)
	}
	f.mu.Unlock()
	return f.Executor.Step(ctx, batch)
}

// loadGemma3 writes the tiny gemma3 model (sliding window 32) and loads
// it through the real loader with a window store for two sequences at a
// 16-token prefill chunk: 8 blocks, 128 positions.
func loadGemma3(t *testing.T) (*engine.Manager, *feedWatch, string) {
	t.Helper()
	w := &feedWatch{fed: map[executor.SeqID][]int32{}}
	mgr, path := serveSynth(t, "gemma3-tiny", 512, 2, func(e executor.Executor) executor.Executor { w.Executor = e; return w })
	return mgr, w, path
}

// TestGemma3WindowStoreThroughScheduler: a gemma3 model whose window store
// holds 128 positions serves two concurrent streams of 200 positions each:
// the scheduler frees window blocks as the streams advance, and each
// stream's greedy tokens equal an executor session whose window store
// never has to reuse a block. A follow-up turn reuses its cached prefix
// (full layers' blocks and the window's tail) and equals a fresh model.
func TestGemma3WindowStoreThroughScheduler(t *testing.T) {
	prompts := []string{"Once upon a time there was a little girl", "The dog ran to the park and"}
	const n = 190
	mgr, w, path := loadGemma3(t)
	info := w.Info()
	if info.Window != 32 || info.WinNumBlocks*info.BlockSize >= n {
		t.Fatalf("window %d, window store of %d positions: the test must outrun it", info.Window, info.WinNumBlocks*info.BlockSize)
	}
	ctx := context.Background()
	got := make([]output, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() { got[i] = complete(ctx, mgr, greedy(p, n)) })
	}
	wg.Wait()

	ref, err := local.Load(ctx, path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 512, Threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if ri := ref.Info(); ri.WinNumBlocks*ri.BlockSize < 512 {
		t.Fatalf("reference window store of %d positions reuses blocks", ri.WinNumBlocks*ri.BlockSize)
	}
	for i := range prompts {
		if got[i].err != nil || len(got[i].tokens) != n {
			t.Fatalf("stream %d: %v, %d tokens", i, got[i].err, len(got[i].tokens))
		}
		prompt := promptFed(t, w, got[i])
		s, err := executor.NewSession(ref, sampling.Params{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Generate(ctx, prompt, n)
		s.Close()
		if err != nil || !slices.Equal(got[i].tokens, want) {
			t.Errorf("stream %d: %v\n tokens %v\n session %v", i, err, got[i].tokens, want)
		}
	}

	// A conversation: the second turn extends the first turn's prompt,
	// which is several windows long.
	first := strings.Repeat("The little girl walked to the old mill by the river, and the miller told her a story. ", 6)
	if o := complete(ctx, mgr, greedy(first, 8)); o.err != nil || o.res.Usage.PromptTokens < 3*info.Window {
		t.Fatalf("first turn: %v, %d prompt tokens", o.err, o.res.Usage.PromptTokens)
	}
	second := first + "What did the miller say?"
	turn := complete(ctx, mgr, greedy(second, 8))
	if turn.err != nil || turn.res.Usage.CachedTokens < 2*info.Window {
		t.Fatalf("second turn: %v, %d cached tokens of %d", turn.err, turn.res.Usage.CachedTokens, turn.res.Usage.PromptTokens)
	}
	fresh, _, _ := loadGemma3(t)
	if again := complete(ctx, fresh, greedy(second, 8)); !slices.Equal(again.tokens, turn.tokens) {
		t.Errorf("second turn %v (%d cached), on a fresh model %v", turn.tokens, turn.res.Usage.CachedTokens, again.tokens)
	}
}

// promptFed is the prompt the scheduler fed for o: the fed sequence whose
// tokens after the prompt are o's generated ones.
func promptFed(t *testing.T, w *feedWatch, o output) []int32 {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	np := o.res.Usage.PromptTokens
	for _, fed := range w.fed {
		// the last generated token is sampled, never fed
		if len(fed) == np+len(o.tokens)-1 && slices.Equal(fed[np:], o.tokens[:len(o.tokens)-1]) {
			return fed[:np]
		}
	}
	t.Fatal("no sequence was fed this output")
	return nil
}
