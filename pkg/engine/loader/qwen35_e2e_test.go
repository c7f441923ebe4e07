package loader

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
)

// batchWatch is an executor that records how the scheduler drives a real
// one: the largest batch, and every work that started a sequence past
// position 0 (a reused prefix).
type batchWatch struct {
	executor.Executor
	mu       sync.Mutex
	maxBatch int
	started  map[executor.SeqID]bool
	resumed  int
}

func (b *batchWatch) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	b.mu.Lock()
	b.maxBatch = max(b.maxBatch, len(batch))
	for _, w := range batch {
		if !b.started[w.Seq] && w.Pos > 0 {
			b.resumed++
		}
		b.started[w.Seq] = true
	}
	b.mu.Unlock()
	return b.Executor.Step(ctx, batch)
}

// loadQwen35 writes the tiny qwen35 model and loads it through the real
// loader, its executor watched.
func loadQwen35(t *testing.T) (*engine.Manager, *batchWatch) {
	t.Helper()
	w := &batchWatch{started: map[executor.SeqID]bool{}}
	mgr, _ := serveSynth(t, "qwen35-tiny", 256, 4, func(e executor.Executor) executor.Executor { w.Executor = e; return w })
	return mgr, w
}

func greedy(prompt string, n int) engine.CompletionRequest {
	return engine.CompletionRequest{Model: "qwen35", Prompt: prompt, AddSpecial: true,
		Options: engine.Options{MaxTokens: n, IgnoreEOS: true}}
}

// TestQwen35ServesConcurrentStreams: a qwen35 model (recurrent DeltaNet
// layers) serves two streams batched together while a third is cancelled
// mid-generation; each finished stream equals its greedy output alone.
func TestQwen35ServesConcurrentStreams(t *testing.T) {
	prompts := []string{"Once upon a time there was a little girl", "The dog ran to the park and"}
	const n = 40
	mgr, w := loadQwen35(t)
	ctx := context.Background()
	solo := make([]output, len(prompts))
	for i, p := range prompts {
		if solo[i] = complete(ctx, mgr, greedy(p, n)); solo[i].err != nil || len(solo[i].tokens) != n {
			t.Fatalf("alone %d: %v (%d tokens, finish %q, text %q)", i, solo[i].err, len(solo[i].tokens), solo[i].reason, solo[i].text)
		}
	}
	got := make([]output, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() { got[i] = complete(ctx, mgr, greedy(p, n)) })
	}
	cctx, cancel := context.WithCancel(ctx)
	var third output
	wg.Go(func() {
		third.res, third.err = mgr.Complete(cctx, greedy("A cat sat on the mat", n), func(d engine.Delta) error {
			third.tokens = append(third.tokens, d.Tokens[0].ID)
			if len(third.tokens) == 5 {
				cancel()
			}
			return nil
		})
	})
	wg.Wait()
	cancel()
	for i := range prompts {
		if got[i].err != nil || !slices.Equal(got[i].tokens, solo[i].tokens) {
			t.Errorf("stream %d: %v, tokens %v; alone %v", i, got[i].err, got[i].tokens, solo[i].tokens)
		}
	}
	if third.err == nil && third.res.FinishReason != "cancelled" || len(third.tokens) >= n {
		t.Errorf("cancelled stream: %v, finish %q after %d tokens", third.err, third.res.FinishReason, len(third.tokens))
	}
	if w.maxBatch < 2 {
		t.Errorf("largest batch %d: the streams were not batched", w.maxBatch)
	}
}

// TestQwen35ChatResumesFromStateSnapshot: the second turn of a chat with a
// qwen35 model resumes from the recurrent state snapshot taken where the
// first turn's prompt ended (its last full block) with the KV pages of that
// prefix, prefills only the rest, and generates what a fresh model
// generates for the whole conversation.
func TestQwen35ChatResumesFromStateSnapshot(t *testing.T) {
	ctx := context.Background()
	mgr, w := loadQwen35(t)
	first := strings.Repeat("The little girl walked to the old mill by the river, and the miller told her a story. ", 3)
	a := complete(ctx, mgr, greedy(first, 8))
	if a.err != nil || a.res.Usage.CachedTokens != 0 {
		t.Fatalf("first turn: %v, %d cached tokens", a.err, a.res.Usage.CachedTokens)
	}
	second := first + a.text + " What did the miller say?"
	b := complete(ctx, mgr, greedy(second, 8))
	boundary := (a.res.Usage.PromptTokens - 1) / 16 * 16 // the first prompt's last full block
	t.Logf("cached %d of %d", b.res.Usage.CachedTokens, b.res.Usage.PromptTokens)
	if b.err != nil || b.res.Usage.CachedTokens < boundary-16 || w.resumed != 1 {
		t.Fatalf("second turn: %v, %d cached tokens (the first prompt has %d), %d sequences resumed past position 0",
			b.err, b.res.Usage.CachedTokens, a.res.Usage.PromptTokens, w.resumed)
	}
	fresh, _ := loadQwen35(t)
	if again := complete(ctx, fresh, greedy(second, 8)); again.err != nil || !slices.Equal(again.tokens, b.tokens) {
		t.Errorf("second turn %v, on a fresh model %v (%v)", b.tokens, again.tokens, again.err)
	}
}
