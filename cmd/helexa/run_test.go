package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/device"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/hub/hubtest"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
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

// openTokenizer opens a GGUF model (closed when the test ends) and builds
// its tokenizer.
func openTokenizer(t *testing.T, path string) (*gguf.File, *tokenizer.Tokenizer) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, tok
}

// withArgs sets the positional arguments (MODEL [PROMPT...]) as the
// command line does.
func withArgs(o runOptions, args ...string) runOptions {
	o.Model, o.Prompt = args[0], args[1:]
	return o
}

// greedyRunOptions are the flag defaults, greedy.
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
		{name: "on the CPU by name", opts: func(o *runOptions) { o.Raw, o.NumPredict, o.Device = true, 4, "cpu" }, args: []string{"Once upon a time"}, wantOut: ", there was a"},
		{name: "chat with verbose", opts: func(o *runOptions) { o.NumPredict, o.Verbose = 5, true }, args: []string{"Once upon a time"},
			wantErr: []string{"load time:", "prompt:", "generated:  5 tokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			tt.opts(&o)
			var out, errb bytes.Buffer
			err := runRun(context.Background(), withArgs(o, append([]string{model}, tt.args...)...), streams{In: strings.NewReader(tt.stdin), Out: &out, Err: &errb})
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
		{"top-p out of range", func(o *runOptions) { o.TopP = 2 }, []string{model, "hi"}, "--top-p 2 is out of range"},
		{"negative num-predict", func(o *runOptions) { o.NumPredict = -3 }, []string{model, "hi"}, "--num-predict -3"},
		{"missing file", func(*runOptions) {}, []string{"./no/such/model.gguf", "hi"}, "does not exist"},
		{"no prompt", func(*runOptions) {}, []string{model}, "no prompt"},
		{"prompt too long", func(o *runOptions) { o.Raw, o.NumCtx = true, 16 }, []string{model, strings.Repeat("Once upon a time ", 20)}, "--num-ctx"},
		{"unknown device", func(o *runOptions) { o.Device = "metal" }, []string{model, "hi"}, "want auto, cpu, cuda or cuda:N"},
	}
	if device.DriverGPUs("/proc/driver/nvidia/gpus") == 0 {
		tests = append(tests, struct {
			name string
			opts func(*runOptions)
			args []string
			want string
		}{"cuda without a GPU", func(o *runOptions) { o.Device = "cuda" }, []string{model, "hi"}, "device cuda:0: no NVIDIA GPU driver"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			tt.opts(&o)
			var out, errb bytes.Buffer
			err := runRun(context.Background(), withArgs(o, tt.args...), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
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
	if err := runRun(context.Background(), withArgs(o, model, "Once upon a time"), streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
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
	mgr, err := newEngine(slog.New(slog.DiscardHandler), nil, func(c *engine.Config) { c.KeepAlive = -1 })
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	ctx := context.Background()
	opts := engine.Options{Sampling: sampling.Params{Temperature: 0}, MaxTokens: 12}

	turn := func(msgs []map[string]string) (engine.Result, string, []int32) {
		t.Helper()
		raw, _ := json.Marshal(msgs)
		var text strings.Builder
		var ids []int32
		res, err := mgr.Chat(ctx, engine.ChatRequest{Model: path, Messages: raw, Options: opts}, func(d engine.Delta) error {
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
	f, tok := openTokenizer(t, path)
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

// TestRunCommandLine runs `helexa run` through the root command: argument
// checks, a prompt of several words, and engine log lines that would only
// repeat the error.
func TestRunCommandLine(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	notGGUF := filepath.Join(t.TempDir(), "not.gguf")
	if err := os.WriteFile(notGGUF, []byte("not a model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		logLevel string
		wantOut  string   // a prefix of stdout
		wantErr  string   // in the error ("" = success)
		stderr   []string // in stderr
		noStderr []string // not in stderr
	}{
		{name: "no model", args: []string{"run"}, wantErr: "run needs a MODEL"},
		{name: "prompt of several words", args: []string{"run", model, "--raw", "--temperature", "0", "-n", "4", "Once", "upon", "a", "time"}, wantOut: ", there was a"},
		{name: "missing file said once", args: []string{"run", "./no/such.gguf", "hi"}, wantErr: "does not exist", noStderr: []string{"model load failed"}},
		{name: "context too small said once", args: []string{"run", model, "--num-ctx", "16", strings.Repeat("Once upon a time ", 10)},
			wantErr: "--num-ctx", noStderr: []string{"request refused"}},
		{name: "HELEXA_LOG_LEVEL shows the engine's lines", args: []string{"run", notGGUF, "hi"}, logLevel: "warn",
			wantErr: "invalid GGUF file", stderr: []string{"model load failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELEXA_LOG_LEVEL", tt.logLevel)
			var out, errb bytes.Buffer
			root := newRootCmd(streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			root.SetArgs(tt.args)
			err := root.ExecuteContext(context.Background())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("helexa %v: %v\nstderr: %s", tt.args, err, errb.String())
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("helexa %v: err = %v, want one mentioning %q", tt.args, err, tt.wantErr)
			}
			if !strings.HasPrefix(out.String(), tt.wantOut) {
				t.Errorf("stdout = %q, want it to start with %q", out.String(), tt.wantOut)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
			for _, w := range tt.noStderr {
				if strings.Contains(errb.String(), w) {
					t.Errorf("stderr repeats the error (%q):\n%s", w, errb.String())
				}
			}
		})
	}
}

// TestRunModelForms: MODEL as a path, a relative path, a directory
// holding a GGUF, and a Hub reference pulled on first use (with progress
// on stderr).
func TestRunModelForms(t *testing.T) {
	isolate(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	dir := filepath.Join(t.TempDir(), "stories")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(model, filepath.Join(dir, "stories260K.gguf")); err != nil {
		t.Fatal(err)
	}
	weights, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	h.AddRepo("tiny/stories-GGUF", map[string][]byte{"stories260K-F32.gguf": weights, "README.md": []byte("card")})
	t.Setenv("HF_ENDPOINT", h.URL)
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Chdir(filepath.Dir(dir))

	tests := []struct {
		name  string
		model string
		pulls bool // progress for the download on stderr
	}{
		{"absolute path", model, false},
		{"directory", dir, false},
		{"relative directory", "stories", false},
		{"relative path", filepath.Join("stories", "stories260K.gguf"), false},
		{"reference pulled on first use", "tiny/stories-GGUF", true},
		{"reference from the cache", "tiny/stories-GGUF", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			o.Raw, o.NumPredict, o.Temperature = true, 4, 0
			var out, errb bytes.Buffer
			if err := runRun(context.Background(), withArgs(o, tt.model, "Once upon a time"), streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
				t.Fatalf("run %s: %v\nstderr: %s", tt.model, err, errb.String())
			}
			if got := out.String(); got != ", there was a\n" {
				t.Errorf("run %s printed %q", tt.model, got)
			}
			if pulled := strings.Contains(errb.String(), "downloading stories260K-F32.gguf"); pulled != tt.pulls {
				t.Errorf("download progress shown = %v, want %v; stderr:\n%s", pulled, tt.pulls, errb.String())
			}
		})
	}
}

// runFake is an engine.Service that records the one request it answers
// with scripted deltas.
type runFake struct {
	engine.Service
	deltas []engine.Delta
	chat   *engine.ChatRequest
	comp   *engine.CompletionRequest
}

func (f *runFake) answer(onDelta func(engine.Delta) error) (engine.Result, error) {
	for _, d := range f.deltas {
		if err := onDelta(d); err != nil {
			return engine.Result{}, err
		}
	}
	return engine.Result{FinishReason: "stop", Usage: engine.Usage{PromptTokens: 7, CompletionTokens: len(f.deltas)}}, nil
}

func (f *runFake) Chat(_ context.Context, req engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	f.chat = &req
	return f.answer(onDelta)
}

func (f *runFake) Complete(_ context.Context, req engine.CompletionRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	f.comp = &req
	return f.answer(onDelta)
}

// TestOneShotRequest: the flags become the request; thinking is printed
// apart from the answer, or not at all.
func TestOneShotRequest(t *testing.T) {
	thinkThenAnswer := []engine.Delta{{Reasoning: "hmm"}, {Reasoning: " ok"}, {Content: "Blue."}}
	tests := []struct {
		name    string
		opts    func(*runOptions)
		deltas  []engine.Delta
		wantOut string
		check   func(t *testing.T, f *runFake)
	}{
		{name: "sampling flags", deltas: []engine.Delta{{Content: "hi"}}, wantOut: "hi\n",
			opts: func(o *runOptions) {
				o.Temperature, o.TopP, o.TopK, o.MinP, o.RepeatPenalty = 0.3, 0.9, 12, 0.02, 1.1
				o.Seed, o.NumPredict, o.NumCtx = 42, 9, 512
			},
			check: func(t *testing.T, f *runFake) {
				want := engine.Options{Sampling: sampling.Params{Temperature: 0.3, TopP: 0.9, TopK: 12, MinP: 0.02, RepeatPenalty: 1.1, Seed: 42}, MaxTokens: 9, NumCtx: 512}
				if f.chat == nil || !reflect.DeepEqual(f.chat.Options, want) {
					t.Errorf("request %+v, want options %+v", f.chat, want)
				}
				if f.chat.TemplateKwargs != nil {
					t.Errorf("without --think the template's default should stand, got kwargs %v", f.chat.TemplateKwargs)
				}
			}},
		{name: "system and think", deltas: thinkThenAnswer, wantOut: "Thinking...\nhmm ok\n...done thinking.\n\nBlue.\n",
			opts: func(o *runOptions) { o.System, o.Think, o.ThinkSet = "Be brief.", true, true },
			check: func(t *testing.T, f *runFake) {
				if got := string(f.chat.Messages); got != `[{"role":"system","content":"Be brief."},{"role":"user","content":"Why?"}]` {
					t.Errorf("messages %s", got)
				}
				if v, ok := f.chat.TemplateKwargs["enable_thinking"]; !ok || v != true {
					t.Errorf("kwargs %v, want enable_thinking true", f.chat.TemplateKwargs)
				}
			}},
		{name: "think off", deltas: []engine.Delta{{Content: "Blue."}}, wantOut: "Blue.\n",
			opts: func(o *runOptions) { o.Think, o.ThinkSet = false, true },
			check: func(t *testing.T, f *runFake) {
				if v, ok := f.chat.TemplateKwargs["enable_thinking"]; !ok || v != false {
					t.Errorf("kwargs %v, want enable_thinking false", f.chat.TemplateKwargs)
				}
			}},
		{name: "hide thinking", deltas: thinkThenAnswer, wantOut: "Blue.\n", opts: func(o *runOptions) { o.HideThinking = true }},
		{name: "raw", deltas: []engine.Delta{{Content: " there"}}, wantOut: " there\n",
			opts: func(o *runOptions) { o.Raw, o.System = true, "ignored" },
			check: func(t *testing.T, f *runFake) {
				if f.chat != nil || f.comp == nil || f.comp.Prompt != "Why?" || !f.comp.AddSpecial {
					t.Errorf("--raw sent chat %+v, completion %+v; want the prompt as is with special tokens", f.chat, f.comp)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := greedyRunOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			reqOpts, err := o.request()
			if err != nil {
				t.Fatal(err)
			}
			f := &runFake{deltas: tt.deltas}
			var out, errb bytes.Buffer
			if err := oneShot(context.Background(), f, "m", "Why?", o, reqOpts, engine.ModelDetails{}, streams{Out: &out, Err: &errb}); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantOut)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

// TestPlainPrinterTerminal: on a terminal thinking is dimmed, not framed
// by "Thinking..." lines.
func TestPlainPrinterTerminal(t *testing.T) {
	var b bytes.Buffer
	p := &plainPrinter{w: &b, tty: true}
	for _, d := range []engine.Delta{{Reasoning: "hmm"}, {Content: "Blue."}} {
		if err := p.delta(d); err != nil {
			t.Fatal(err)
		}
	}
	p.finish()
	if want := "\x1b[2mhmm\x1b[0m\n\nBlue.\n"; b.String() != want {
		t.Errorf("terminal output %q, want %q", b.String(), want)
	}
}

// TestLoadSpinner: the spinner draws on a terminal only, after its delay,
// and erases itself.
func TestLoadSpinner(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		quiet    bool
		after    time.Duration
		want     bool
	}{
		{"terminal", true, false, 0, true},
		{"not yet", true, false, time.Hour, false},
		{"downloads draw instead", true, true, 0, false},
		{"not a terminal", false, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			var w io.Writer = &b
			screen := make(chan string, 1)
			if tt.terminal {
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer ptmx.Close()
				defer tty.Close()
				w = tty
				go func() { // everything up to the end mark
					var all []byte
					buf := make([]byte, 4096)
					for !bytes.Contains(all, []byte("<end>")) {
						n, err := ptmx.Read(buf)
						if err != nil {
							break
						}
						all = append(all, buf[:n]...)
					}
					screen <- string(all)
				}()
			}
			stop := startSpinner(w, "loading m", func() bool { return tt.quiet }, tt.after)
			time.Sleep(350 * time.Millisecond)
			stop()
			s := b.String()
			if tt.terminal {
				_, _ = io.WriteString(w, "<end>")
				s = <-screen
			}
			if drew := strings.Contains(s, "loading m "); drew != tt.want {
				t.Errorf("drew = %v, want %v (%q)", drew, tt.want, s)
			}
			if tt.want && !strings.HasSuffix(s, "\r\x1b[K<end>") {
				t.Errorf("the spinner did not erase its line: %q", s)
			}
		})
	}
}

// TestClientEnvReachesTheDaemon: HELEXA_NUM_CTX and HELEXA_KEEP_ALIVE in
// the client's shell go with the requests; daemon-only settings are named
// in a note instead of being silently ignored.
func TestClientEnvReachesTheDaemon(t *testing.T) {
	t.Setenv("HELEXA_NUM_CTX", "1024")
	t.Setenv("HELEXA_KEEP_ALIVE", "10m")
	t.Setenv("HELEXA_NUM_THREADS", "3")
	var opts runOptions
	var req engine.Options
	var errw strings.Builder
	if err := applyClientEnv(&opts, &req, "127.0.0.1:13131", &errw); err != nil {
		t.Fatal(err)
	}
	if opts.NumCtx != 1024 || req.NumCtx != 1024 || req.KeepAlive == nil || *req.KeepAlive != 10*time.Minute {
		t.Errorf("num_ctx %d/%d keep_alive %v", opts.NumCtx, req.NumCtx, req.KeepAlive)
	}
	if !strings.Contains(errw.String(), "HELEXA_NUM_THREADS") {
		t.Errorf("no note about a daemon-only setting: %q", errw.String())
	}
	opts = runOptions{NumCtx: 64}
	if err := applyClientEnv(&opts, &req, "x", io.Discard); err != nil || opts.NumCtx != 64 {
		t.Errorf("--num-ctx must win over the environment: %d %v", opts.NumCtx, err)
	}
}
