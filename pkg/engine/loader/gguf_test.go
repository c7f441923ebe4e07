package loader

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/hub/hubtest"
	"github.com/helexa/helexa/pkg/sampling"
)

type greedyRef struct {
	Cases []struct {
		Name   string  `json:"name"`
		Prompt string  `json:"prompt"`
		Tokens []int32 `json:"tokens"`
		Greedy []struct {
			Token int32        `json:"token"`
			Top5  [][2]float64 `json:"top5"`
		} `json:"greedy"`
	} `json:"cases"`
}

func newFilesManager(t testing.TB) *engine.Manager {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.NumCtx = 256
	cfg.KeepAlive = -1
	loader := &Files{Hub: hub.New(hub.Options{CacheDir: t.TempDir(), Offline: true}), Options: executor.LoadOptions{Threads: 2},
		Log: slog.New(slog.DiscardHandler)}
	m := engine.NewManager(cfg, loader, nil)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

func TestFilesGGUFStories260KGreedy(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	raw, err := os.ReadFile(fixtures.Path(t, "reference", "stories260K.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref greedyRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	c := ref.Cases[0]
	if c.Name != "short" {
		t.Fatalf("first reference case is %q, want short", c.Name)
	}
	m := newFilesManager(t)
	o := complete(context.Background(), m, engine.CompletionRequest{Model: model, Prompt: c.Prompt, AddSpecial: true,
		Options: engine.Options{MaxTokens: len(c.Greedy)}})
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Usage.PromptTokens != len(c.Tokens) {
		t.Errorf("prompt tokens %d, want %d", o.res.Usage.PromptTokens, len(c.Tokens))
	}
	if len(o.tokens) == 0 {
		t.Fatal("no tokens generated")
	}
	for i, g := range c.Greedy {
		if i >= len(o.tokens) {
			t.Fatalf("generation ended after %d tokens (%s), reference has %d", len(o.tokens), o.reason, len(c.Greedy))
		}
		if o.tokens[i] != g.Token {
			if margin := g.Top5[0][1] - g.Top5[1][1]; margin > 1e-3 {
				t.Errorf("step %d: token %d, reference %d (margin %.4f)", i, o.tokens[i], g.Token, margin)
			}
			break
		}
	}

	// A second identical request reuses the cached prompt blocks and
	// produces the same tokens.
	again := complete(context.Background(), m, engine.CompletionRequest{Model: model, Prompt: c.Prompt, AddSpecial: true,
		Options: engine.Options{MaxTokens: len(c.Greedy)}})
	if again.err != nil || len(again.tokens) != len(o.tokens) {
		t.Fatalf("second run: %v, %d tokens", again.err, len(again.tokens))
	}
	for i := range o.tokens {
		if again.tokens[i] != o.tokens[i] {
			t.Fatalf("second run differs at %d: %v vs %v", i, again.tokens, o.tokens)
		}
	}
}

func TestFilesGGUFChatShowAndErrors(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	m := newFilesManager(t)
	ctx := context.Background()
	var text string
	res, err := m.Chat(ctx, engine.ChatRequest{Model: model, Messages: json.RawMessage(`[{"role":"user","content":"Tell me a story"}]`),
		Options: engine.Options{MaxTokens: 8}}, func(d engine.Delta) error { text += d.Content; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 || text == "" {
		t.Errorf("chat: %+v, text %q", res, text)
	}
	d, err := m.Show(ctx, model)
	if err != nil || d.Arch != "llama" || d.Parameters == 0 || d.Context != 256 || d.Quant != "F32" {
		t.Errorf("show: %+v, %v", d, err)
	}
	if _, err := m.Load(ctx, engine.LoadRequest{Model: "/nonexistent/model.gguf"}); kindOf(err) != engine.KindNotFound {
		t.Errorf("missing file: %v, want not found", err)
	}
}

// JSON mode end to end needs the executor to honour executor.Work.Allowed.
func TestFilesGGUFJSONMode(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	m := newFilesManager(t)
	for seed := range uint64(3) {
		req := engine.CompletionRequest{Model: model, Prompt: "Here is the data:", AddSpecial: true, Options: engine.Options{
			MaxTokens: 40, JSONMode: true, Sampling: sampling.Params{Temperature: 0.8, Seed: seed}}}
		o := complete(context.Background(), m, req)
		if o.err != nil {
			t.Fatal(o.err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(o.text), &v); err != nil {
			t.Errorf("seed %d: output %q (%s) does not parse: %v", seed, o.text, o.reason, err)
		}
	}
}

// TestFilesGGUFPullsOnFirstRequest: a request naming a Hub reference that
// is not in the cache downloads it (from a fake Hub) and generates; a
// reference the Hub lacks is a 404-kind error.
func TestFilesGGUFPullsOnFirstRequest(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	fake := hubtest.New(t)
	fake.AddRepo("tiny/stories-GGUF", map[string][]byte{"stories260K-F32.gguf": data})
	cfg := engine.DefaultConfig()
	cfg.NumCtx, cfg.KeepAlive = 256, -1
	hc := hub.New(hub.Options{CacheDir: t.TempDir(), Endpoint: fake.URL})
	m := engine.NewManager(cfg, &Files{Hub: hc, Options: executor.LoadOptions{Threads: 2}, Log: slog.New(slog.DiscardHandler)}, nil)
	t.Cleanup(func() { _ = m.Close(context.Background()) })

	tests := []struct {
		name, model string
		unload      bool // unload it first, so it is loaded again from the cache
		kind        engine.Kind
	}{
		{"pulled on first use", "tiny/stories-GGUF:F32", false, ""},
		{"loaded from the cache the second time", "tiny/stories-GGUF:F32", true, ""},
		{"missing repository", "tiny/nothing-GGUF:F32", false, engine.KindNotFound},
		{"missing quant", "tiny/stories-GGUF:Q4_K_M", false, engine.KindNotFound},
		{"another service's model name", "gpt-4o-mini", false, engine.KindNotFound},
		{"malformed reference", "tiny/stories-GGUF:Q4 K", false, engine.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unload {
				if err := m.Unload(context.Background(), tt.model); err != nil && kindOf(err) != engine.KindNotFound {
					t.Fatal(err)
				}
			}
			o := complete(context.Background(), m, engine.CompletionRequest{Model: tt.model, Prompt: "Once upon a time",
				AddSpecial: true, Options: engine.Options{MaxTokens: 4}})
			if kindOf(o.err) != tt.kind || (tt.kind == "" && len(o.tokens) == 0) {
				t.Fatalf("got %v (%d tokens), want kind %q", o.err, len(o.tokens), tt.kind)
			}
		})
	}
	if st := fake.Stats("tiny/stories-GGUF", "stories260K-F32.gguf"); st.Gets != 1 {
		t.Errorf("the model file was fetched %d times, want once", st.Gets)
	}
}
