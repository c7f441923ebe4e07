package loader

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/hub/hubtest"
	"github.com/helexa/helexa/pkg/models/safetensors/sttest"
)

// hfDir converts a fixture GGUF into a Hugging Face directory.
func hfDir(t *testing.T, model string, o sttest.Options) string {
	t.Helper()
	dir := t.TempDir()
	if err := sttest.Convert(fixtures.Path(t, "models", model), dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHFLoaderMatchesGGUF: the Hugging Face form of llama-q tokenizes
// every reference prompt as llama.cpp did, and generates greedily exactly
// what the GGUF model generates.
func TestHFLoaderMatchesGGUF(t *testing.T) {
	dir := hfDir(t, "llama-q-F32.gguf", sttest.Options{Shards: 2})
	raw, err := os.ReadFile(fixtures.Path(t, "reference", "llama-q-F32.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref greedyRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	tok, err := hfTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cases {
		got, err := tok.Encode(c.Prompt, true, false)
		if err != nil || !slices.Equal(got, c.Tokens) {
			t.Errorf("%s: tokenizer.json gives %v (%v), llama.cpp %v", c.Name, got, err, c.Tokens)
		}
	}
	m := newFilesManager(t)
	ctx := context.Background()
	run := func(model string) output {
		o := complete(ctx, m, engine.CompletionRequest{Model: model, Prompt: ref.Cases[0].Prompt, AddSpecial: true,
			Options: engine.Options{MaxTokens: 16}})
		if o.err != nil {
			t.Fatalf("%s: %v", model, o.err)
		}
		return o
	}
	want, got := run(fixtures.Path(t, "models", "llama-q-F32.gguf")), run(dir)
	if len(want.tokens) != 16 || !slices.Equal(got.tokens, want.tokens) || got.text != want.text {
		t.Errorf("directory generated %v %q, GGUF %v %q", got.tokens, got.text, want.tokens, want.text)
	}
	d, err := m.Show(ctx, dir)
	if err != nil || d.Arch != "llama" || d.Quant != "F32" || d.Parameters == 0 || d.ContextTrain != 2048 || d.Template == "" {
		t.Errorf("show: %+v, %v", d, err)
	}
}

// TestHFLoaderPulledRepo: a safetensors repository pulled from a (fake)
// Hub loads by reference and generates what the GGUF model generates.
func TestHFLoaderPulledRepo(t *testing.T) {
	dir := hfDir(t, "qwen2-tiny-F32.gguf", sttest.Options{})
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	files["generation_config.json"] = []byte(`{"eos_token_id": [2, 7]}`)
	fake := hubtest.New(t)
	fake.AddRepo("tiny/qwen2-hf", files)
	cfg := engine.DefaultConfig()
	cfg.NumCtx, cfg.KeepAlive = 256, -1
	hc := hub.New(hub.Options{CacheDir: t.TempDir(), Endpoint: fake.URL})
	m := engine.NewManager(cfg, &Files{Hub: hc, Options: executor.LoadOptions{Threads: 2}, Log: slog.New(slog.DiscardHandler)}, nil)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	ctx := context.Background()
	req := engine.CompletionRequest{Prompt: "Once upon a time", AddSpecial: true, Options: engine.Options{MaxTokens: 12}}
	req.Model = "tiny/qwen2-hf"
	got := complete(ctx, m, req)
	req.Model = fixtures.Path(t, "models", "qwen2-tiny-F32.gguf")
	want := complete(ctx, m, req)
	if got.err != nil || want.err != nil {
		t.Fatalf("errors: %v / %v", got.err, want.err)
	}
	// token 7 ends generation for the directory model only
	if i := slices.Index(want.tokens, 7); i >= 0 {
		want.tokens = want.tokens[:i]
	}
	if !slices.Equal(got.tokens, want.tokens) {
		t.Errorf("pulled repo generated %v, GGUF %v", got.tokens, want.tokens)
	}
	d, err := m.Show(ctx, "tiny/qwen2-hf")
	if err != nil || d.Arch != "qwen2" {
		t.Errorf("show: %+v, %v", d, err)
	}
}

func TestHFLoaderErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(dir string)
		want   string
	}{
		{"no tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, "tokenizer.json"},
		{"bad config", func(dir string) { os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644) }, "config.json"},
		{"unsupported arch", func(dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"architectures": ["PhiForCausalLM"], "max_position_embeddings": 64}`), 0o644)
		}, "Qwen3MoeForCausalLM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := hfDir(t, "qwen2-tiny-F32.gguf", sttest.Options{})
			tc.mutate(dir)
			m := newFilesManager(t)
			o := complete(context.Background(), m, engine.CompletionRequest{Model: dir, Prompt: "x", Options: engine.Options{MaxTokens: 1}})
			if o.err == nil || kindOf(o.err) != engine.KindBadRequest || !strings.Contains(o.err.Error(), tc.want) {
				t.Fatalf("error %v (kind %q), want a bad request mentioning %q", o.err, kindOf(o.err), tc.want)
			}
		})
	}
}

// TestLoaderDirWithGGUF: a directory holding a .gguf (and no safetensors)
// still loads the GGUF.
func TestLoaderDirWithGGUF(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(fixtures.Path(t, "models", "stories260K.gguf"), filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	m := newFilesManager(t)
	o := complete(context.Background(), m, engine.CompletionRequest{Model: dir, Prompt: "Once upon a time", AddSpecial: true,
		Options: engine.Options{MaxTokens: 4}})
	if o.err != nil || len(o.tokens) == 0 {
		t.Fatalf("%v, %d tokens", o.err, len(o.tokens))
	}
	d, err := m.Show(context.Background(), dir)
	if err != nil || d.Arch != "llama" || !strings.HasSuffix(d.Path, ".gguf") {
		t.Errorf("show: %+v, %v", d, err)
	}
}
