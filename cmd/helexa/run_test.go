package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/runner"
	"github.com/helexa/helexa/pkg/sampling"
)

// isolate points the engine at private directories and at no daemon.
func isolate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HELEXA_HOST", "127.0.0.1:1")
	t.Setenv("HELEXA_STATE_DIR", filepath.Join(dir, "state"))
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hf"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HELEXA_LOG_LEVEL", "")
}

// defaultRunOptions are the flag defaults, greedy.
func greedyRunOptions() runOptions {
	return runOptions{TopP: 0.95, TopK: 40, MinP: 0.05, RepeatPenalty: 1, Seed: -1}
}

func TestRunOneShotInProcess(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	tests := []struct {
		name    string
		opts    func(*runOptions)
		args    []string
		stdin   string
		wantOut string // a prefix of stdout
		wantErr []string
	}{
		{name: "raw prompt argument", opts: func(o *runOptions) { o.Raw, o.NumPredict = true, 4 }, args: []string{"Once upon a time"}, wantOut: ", there was a"},
		{name: "raw prompt on stdin", opts: func(o *runOptions) { o.Raw, o.NumPredict = true, 4 }, stdin: "Once upon a time\n", wantOut: ", there was a"},
		{name: "chat with verbose", opts: func(o *runOptions) { o.NumPredict, o.Verbose = 5, true }, args: []string{"Once upon a time"},
			wantErr: []string{"load time:", "prompt:", "generated:  5 tokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			tt.opts(&o)
			var out, errb bytes.Buffer
			err := runRun(context.Background(), o, append([]string{model}, tt.args...), streams{In: strings.NewReader(tt.stdin), Out: &out, Err: &errb})
			if err != nil {
				t.Fatalf("runRun: %v\nstderr: %s", err, errb.String())
			}
			if !strings.HasPrefix(out.String(), tt.wantOut) || !strings.HasSuffix(out.String(), "\n") || strings.Contains(out.String(), "\x1b") {
				t.Errorf("stdout = %q, want plain text starting with %q ending in a newline", out.String(), tt.wantOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
		})
	}
}

func TestRunBadInput(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	tests := []struct {
		name string
		opts func(*runOptions)
		args []string
		want string
	}{
		{"top-p out of range", func(o *runOptions) { o.TopP = 2 }, []string{model, "hi"}, "top_p 2 is outside [0, 1]"},
		{"negative num-predict", func(o *runOptions) { o.NumPredict = -3 }, []string{model, "hi"}, "--num-predict -3"},
		{"missing file", func(*runOptions) {}, []string{"./no/such/model.gguf", "hi"}, "does not exist"},
		{"no prompt", func(*runOptions) {}, []string{model}, "no prompt"},
		{"prompt too long", func(o *runOptions) { o.Raw, o.NumCtx = true, 16 }, []string{model, strings.Repeat("Once upon a time ", 20)}, "--num-ctx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			tt.opts(&o)
			var out, errb bytes.Buffer
			err := runRun(context.Background(), o, tt.args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestRunUsesDaemon: with a daemon at HELEXA_HOST, run talks to it.
func TestRunUsesDaemon(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	mgr, err := newEngine(slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	srv, err := api.NewServer(api.Config{Service: mgr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	t.Setenv("HELEXA_HOST", hs.URL)
	o := greedyRunOptions()
	o.Raw, o.NumPredict, o.Verbose = true, 4, true
	var out, errb bytes.Buffer
	if err := runRun(context.Background(), o, []string{model, "Once upon a time"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
		t.Fatalf("runRun: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "using the helexa daemon at "+hs.URL) {
		t.Errorf("stderr does not say the daemon was used:\n%s", errb.String())
	}
	if !strings.HasPrefix(out.String(), ", there was a") {
		t.Errorf("stdout = %q", out.String())
	}
	ps, err := mgr.PS(context.Background())
	if err != nil || len(ps) != 1 {
		t.Errorf("the daemon's engine has %d models loaded (%v), want the one run used", len(ps), err)
	}
}

// TestSecondChatTurnPrefillsOnlyNewTokens: the second turn of a chat reuses
// the KV of the first (prompt and answer) and prefills only what is new.
func TestSecondChatTurnPrefillsOnlyNewTokens(t *testing.T) {
	isolate(t)
	path := fixtures.Path(t, "models", "stories260K.gguf")
	mgr, err := newEngine(slog.New(slog.DiscardHandler), nil, func(c *runner.Config) { c.KeepAlive = -1 })
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	ctx := context.Background()
	opts := runner.Options{Sampling: sampling.Params{Temperature: 0}, MaxTokens: 12}

	turn := func(msgs []map[string]string) (runner.Result, string, []int32) {
		t.Helper()
		raw, _ := json.Marshal(msgs)
		var text strings.Builder
		var ids []int32
		res, err := mgr.Chat(ctx, runner.ChatRequest{Model: path, Messages: raw, Options: opts}, func(d runner.Delta) error {
			text.WriteString(d.Content)
			for _, tk := range d.Tokens {
				ids = append(ids, tk.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return res, text.String(), ids
	}
	msgs := []map[string]string{{"role": "user", "content": "Once upon a time"}}
	res1, answer, gen1 := turn(msgs)
	msgs = append(msgs, map[string]string{"role": "assistant", "content": answer}, map[string]string{"role": "user", "content": "What happened next?"})
	res2, _, _ := turn(msgs)

	// What the engine saw: both prompts, rendered and tokenized as it does.
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chat.FromGGUF(f, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	encode := func(msgs []map[string]string) []int32 {
		raw, _ := json.Marshal(msgs)
		text, err := tpl.Render(ctx, chat.Input{Messages: raw, AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := tok.Encode(text, false, true)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	p1, p2 := encode(msgs[:1]), encode(msgs)
	if res1.Usage.PromptTokens != len(p1) || res2.Usage.PromptTokens != len(p2) {
		t.Fatalf("prompt tokens %d and %d, want %d and %d", res1.Usage.PromptTokens, res2.Usage.PromptTokens, len(p1), len(p2))
	}
	// The KV cache holds turn 1's prompt and the answer tokens fed back.
	seen := append(append([]int32(nil), p1...), gen1[:len(gen1)-1]...)
	common := 0
	for common < len(seen) && common < len(p2) && seen[common] == p2[common] {
		common++
	}
	newPart := len(p2) - common
	const block = 16 // the executor's KV block size: the prefix cache reuses whole blocks
	wantCached := min(common/block, (len(p2)-1)/block) * block
	u := res2.Usage
	t.Logf("turn 1: %d prompt tokens; turn 2: %d prompt tokens, %d cached, %d shared with turn 1, %d new", len(p1), len(p2), u.CachedTokens, common, newPart)
	if u.CachedTokens <= 0 || common < len(p1) {
		t.Fatalf("turn 2 reused %d tokens; its prompt shares %d tokens with turn 1 (prompt %d)", u.CachedTokens, common, len(p1))
	}
	if u.CachedTokens != wantCached || u.PromptTokens-u.CachedTokens != newPart+(common-wantCached) {
		t.Errorf("turn 2 prefilled %d of %d tokens; want the %d new ones plus the %d of a partly shared KV block",
			u.PromptTokens-u.CachedTokens, u.PromptTokens, newPart, common-wantCached)
	}
	if common-wantCached >= block {
		t.Errorf("%d shared tokens were prefilled again: more than one block", common-wantCached)
	}
}
