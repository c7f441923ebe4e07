package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/helexa/helexa/pkg/engine"
)

func TestStreamingAnswer(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{details: engine.ModelDetails{Context: 4096}}
	usage := engine.Usage{PromptTokens: 12, CompletionTokens: 5, DecodeDuration: 100 * time.Millisecond}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		for _, dl := range []engine.Delta{{Reasoning: "pondering the question"}, {Content: "Hello"}} {
			if err := onDelta(dl); err != nil {
				return engine.Result{}, err
			}
		}
		<-release // the first half is on screen before the rest arrives
		if err := onDelta(engine.Delta{Content: " **bold world**"}); err != nil {
			return engine.Result{}, err
		}
		return engine.Result{FinishReason: "stop", Usage: usage}, nil
	}
	d := newDriver(t, svc, nil)
	d.typeText("hi there")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && strings.Contains(d.m.gen.entry.text, "Hello") })
	contains(t, "screen while streaming", d.screen(), "› hi there", "Hello", "generating", "pondering the question")
	close(release)
	d.settle(func() bool { return d.m.gen == nil })
	scr := d.screen()
	contains(t, "screen after the answer", scr, "Hello bold world", "ctx 17/4096", "40.0 tok/s", "thought for 1 line")
	if strings.Contains(scr, "**") {
		t.Errorf("the finished answer was not rendered as markdown:\n%s", scr)
	}
	if strings.Contains(scr, "pondering the question") {
		t.Errorf("the finished answer's thinking is not collapsed:\n%s", scr)
	}
	d.ctrl('t')
	contains(t, "screen with thinking expanded", d.screen(), "pondering the question")

	// The second turn sends the whole conversation.
	svc.chat = streamReply(usage, engine.Delta{Content: "again"})
	d.say("and now?")
	reqs := svc.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2", len(reqs))
	}
	got := messagesOf(t, reqs[1])
	want := []Message{{Role: "user", Content: "hi there"}, {Role: "assistant", Content: "Hello **bold world**"}, {Role: "user", Content: "and now?"}}
	if len(got) != len(want) {
		t.Fatalf("second turn sent %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHideThinking(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{}, engine.Delta{Reasoning: "secret plan"}, engine.Delta{Content: "answer"})}
	d := newDriver(t, svc, func(c *Config) { c.HideThinking = true })
	d.say("q")
	if tr := d.transcript(); strings.Contains(tr, "secret plan") || !strings.Contains(tr, "answer") {
		t.Errorf("with HideThinking the transcript should show the answer only:\n%s", tr)
	}
}

func TestCancelMidAnswer(t *testing.T) {
	svc := &fakeService{}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		_ = onDelta(engine.Delta{Content: "partial "})
		_ = onDelta(engine.Delta{Content: "answer"})
		<-ctx.Done()
		return engine.Result{FinishReason: "cancelled", Usage: engine.Usage{PromptTokens: 3, CompletionTokens: 2}}, ctx.Err()
	}
	d := newDriver(t, svc, nil)
	d.typeText("tell me a long story")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && d.m.gen.entry.text == "partial answer" })
	d.ctrl('c')
	if d.quit {
		t.Fatal("Ctrl+C during an answer quit the program")
	}
	d.settle(func() bool { return d.m.gen == nil })
	contains(t, "screen after Ctrl+C", d.screen(), "partial answer", "[stopped]")
	if n := len(d.m.msgs); n != 2 || d.m.msgs[1].Content != "partial answer" {
		t.Errorf("conversation after a stopped answer = %+v, want the question and the partial answer", d.m.msgs)
	}
	// Idle: the first Ctrl+C hints, the second quits.
	d.ctrl('c')
	contains(t, "status after one idle Ctrl+C", d.screen(), "Ctrl+C again")
	if d.quit {
		t.Fatal("one idle Ctrl+C quit")
	}
	d.ctrl('c')
	d.settle(func() bool { return d.quit })
}

func TestCtrlDQuits(t *testing.T) {
	d := newDriver(t, &fakeService{}, nil)
	d.typeText("x")
	d.ctrl('d')
	if d.m.quitting {
		t.Fatal("Ctrl+D with text in the input quit")
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyBackspace})
	d.ctrl('d')
	d.settle(func() bool { return d.quit })
}

func TestMultilineInput(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{}, engine.Delta{Content: "ok"})}
	d := newDriver(t, svc, nil)
	d.typeText("line one")
	d.key(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	d.typeText("line two\nline three")
	if got := d.m.input.Value(); got != "line one\nline two\nline three" {
		t.Fatalf("input = %q", got)
	}
	d.send(tea.PasteMsg{Content: "\npasted\nlines"})
	d.enter()
	d.settle(func() bool { return d.m.gen == nil })
	reqs := svc.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := messagesOf(t, reqs[0])[0].Content; got != "line one\nline two\nline three\npasted\nlines" {
		t.Errorf("sent %q", got)
	}
	var tr []string // the transcript without the padding of wrapped lines
	for _, l := range strings.Split(d.transcript(), "\n") {
		tr = append(tr, strings.TrimRight(l, " "))
	}
	contains(t, "transcript", strings.Join(tr, "\n"), "› line one\n  line two\n  line three\n  pasted\n  lines\n")
}

func TestContextFullNotice(t *testing.T) {
	svc := &fakeService{}
	svc.chat = func(context.Context, engine.ChatRequest, func(engine.Delta) error) (engine.Result, error) {
		return engine.Result{}, engine.Errorf(engine.KindContextLength, "the prompt is 5000 tokens but the context of model %q is 4096 tokens", "test-model")
	}
	d := newDriver(t, svc, nil)
	d.say("a very long question")
	contains(t, "screen", d.screen(), "no longer fits", "/clear", "4096 tokens")
	if len(d.m.msgs) != 0 {
		t.Errorf("the unanswered question stayed in the conversation: %+v", d.m.msgs)
	}
	if got := d.m.input.Value(); got != "a very long question" {
		t.Errorf("input = %q, want the question back", got)
	}
	// An answer cut off by a full context says so too.
	svc.chat = streamReply(engine.Usage{PromptTokens: 4000, CompletionTokens: 96}, engine.Delta{Content: "cut"})
	svc.chat = func(ctx context.Context, r engine.ChatRequest, f func(engine.Delta) error) (engine.Result, error) {
		_ = f(engine.Delta{Content: "cut"})
		return engine.Result{FinishReason: "length", Usage: engine.Usage{PromptTokens: 4000, CompletionTokens: 96}}, nil
	}
	d.m.setInput("")
	d.say("short")
	contains(t, "screen", d.screen(), "context is full (4096 of 4096 tokens)", "/clear")
}

func TestOtherErrorShown(t *testing.T) {
	svc := &fakeService{}
	svc.chat = func(context.Context, engine.ChatRequest, func(engine.Delta) error) (engine.Result, error) {
		return engine.Result{}, engine.Errorf(engine.KindPoisoned, "model poisoned; unload and load again")
	}
	d := newDriver(t, svc, nil)
	d.say("hello")
	contains(t, "screen", d.screen(), "error: model poisoned")
	if len(d.m.msgs) != 0 {
		t.Errorf("conversation = %+v", d.m.msgs)
	}
}

func TestSlashCommands(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "sub", "chat.json")
	t.Setenv("HOME", filepath.Join(dir, "home"))
	tests := []struct {
		name  string
		lines []string
		check func(t *testing.T, d *driver, svc *fakeService)
	}{
		{"help", []string{"/help"}, func(t *testing.T, d *driver, _ *fakeService) {
			contains(t, "transcript", d.transcript(), "/set think on|off", "/save FILE", "Alt+Enter")
		}},
		{"unknown", []string{"/frobnicate"}, func(t *testing.T, d *driver, _ *fakeService) {
			contains(t, "transcript", d.transcript(), "unknown command /frobnicate")
		}},
		{"set sampling", []string{"/set temperature 0.25", "/set top_k 7", "/set top_p 0.5", "/set min_p 0.1", "/set repeat_penalty 1.2", "/set seed 42", "/set num_predict 9", "hi"},
			func(t *testing.T, d *driver, svc *fakeService) {
				o := svc.requests()[0].Options
				s := o.Sampling
				if s.Temperature != 0.25 || s.TopK != 7 || s.TopP != 0.5 || s.MinP != float32(0.1) || s.RepeatPenalty != float32(1.2) || s.Seed != 42 || o.MaxTokens != 9 {
					t.Errorf("options sent = %+v", o)
				}
			}},
		{"set bad values", []string{"/set top_k lots", "/set top_p 2", "/set colour red", "/set think maybe"}, func(t *testing.T, d *driver, _ *fakeService) {
			contains(t, "transcript", d.transcript(), `"lots" is not a non-negative integer`, "top_p 2 is outside [0, 1]", `unknown setting "colour"`, "usage: /set think on|off")
		}},
		{"system and think", []string{"/set system You are terse.", "/set think off", "hi"}, func(t *testing.T, d *driver, svc *fakeService) {
			req := svc.requests()[0]
			ms := messagesOf(t, req)
			if len(ms) != 2 || ms[0].Role != "system" || ms[0].Content != "You are terse." {
				t.Errorf("messages = %+v", ms)
			}
			if v, ok := req.TemplateKwargs["enable_thinking"]; !ok || v != false {
				t.Errorf("template kwargs = %v", req.TemplateKwargs)
			}
		}},
		{"show info", []string{"/show info"}, func(t *testing.T, d *driver, _ *fakeService) {
			contains(t, "transcript", d.transcript(), "architecture llama", "parameters   1.50M", "quantization Q8_0", "/models/x.gguf")
		}},
		{"clear", []string{"hi", "/clear", "again"}, func(t *testing.T, d *driver, svc *fakeService) {
			if ms := messagesOf(t, svc.requests()[1]); len(ms) != 1 || ms[0].Content != "again" {
				t.Errorf("after /clear the conversation sent was %+v", ms)
			}
			if strings.Contains(d.transcript(), "› hi") {
				t.Errorf("/clear kept the old transcript:\n%s", d.transcript())
			}
		}},
		{"save", []string{"hi", "/save " + saved}, func(t *testing.T, d *driver, _ *fakeService) {
			b, err := os.ReadFile(saved)
			if err != nil {
				t.Fatal(err)
			}
			var c SavedConversation
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			if c.Model != "test-model" || len(c.Messages) != 2 || c.Messages[1].Content != "fine" {
				t.Errorf("saved %+v", c)
			}
		}},
		{"save to ~", []string{"hi", "/save ~/chats/one.json"}, func(t *testing.T, d *driver, _ *fakeService) {
			if _, err := os.Stat(filepath.Join(dir, "home", "chats", "one.json")); err != nil {
				t.Errorf("/save ~/… did not write under the home directory: %v\n%s", err, d.transcript())
			}
		}},
		{"stats", []string{"/stats", "hi", "/stats"}, func(t *testing.T, d *driver, _ *fakeService) {
			contains(t, "transcript", d.transcript(), "No answers yet.", "prompt    10 tokens (4 from cache)", "generated 3 tokens, 20.0 tok/s", "Context: 13 of 4096", "Session (1 answer):")
		}},
		{"load", []string{"/load other.gguf"}, func(t *testing.T, d *driver, svc *fakeService) {
			if d.m.model != "other.gguf" || len(svc.loads) != 1 || svc.loads[0].Model != "other.gguf" {
				t.Errorf("model %q, loads %+v", d.m.model, svc.loads)
			}
			contains(t, "transcript", d.transcript(), "Loaded other.gguf")
		}},
		{"load from ~", []string{"/load ~/m.gguf"}, func(t *testing.T, d *driver, svc *fakeService) {
			if want := filepath.Join(dir, "home", "m.gguf"); len(svc.loads) != 1 || svc.loads[0].Model != want {
				t.Errorf("loads %+v, want %s", svc.loads, want)
			}
		}},
		{"num_ctx reloads", []string{"/set num_ctx 8192"}, func(t *testing.T, d *driver, svc *fakeService) {
			if len(svc.loads) != 1 || svc.loads[0].NumCtx != 8192 || d.m.details.Context != 8192 {
				t.Errorf("loads %+v, context %d", svc.loads, d.m.details.Context)
			}
			contains(t, "screen", d.screen(), "ctx 0/8192")
		}},
		{"bye", []string{"/bye"}, func(t *testing.T, d *driver, _ *fakeService) {
			d.settle(func() bool { return d.quit })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{
				details: engine.ModelDetails{Arch: "llama", Parameters: 1_500_000, Quant: "Q8_0", Context: 4096, Path: "/models/x.gguf"},
				chat: streamReply(engine.Usage{PromptTokens: 10, CachedTokens: 4, CompletionTokens: 3, DecodeDuration: 100 * time.Millisecond},
					engine.Delta{Content: "fine"}),
			}
			d := newDriver(t, svc, nil)
			for _, l := range tt.lines {
				d.say(l)
			}
			tt.check(t, d, svc)
		})
	}
}

func TestHistoryPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "history")
	svc := &fakeService{chat: streamReply(engine.Usage{}, engine.Delta{Content: "ok"})}
	h, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, svc, func(c *Config) { c.History = h })
	d.say("first")
	d.say("second\nline")
	d.say("/help")

	h2, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Len() != 3 {
		t.Fatalf("history file has %d entries, want 3", h2.Len())
	}
	d2 := newDriver(t, svc, func(c *Config) { c.History = h2 })
	d2.typeText("draft")
	up := tea.KeyPressMsg{Code: tea.KeyUp}
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{up, "/help"}, {up, "second\nline"}, {up, "first"}, {up, "first"},
		{down, "second\nline"}, {down, "/help"}, {down, "draft"},
	}
	for i, s := range steps {
		d2.key(s.key)
		if got := d2.m.input.Value(); got != s.want {
			t.Fatalf("step %d: input = %q, want %q", i, got, s.want)
		}
		if s.want == "second\nline" && s.key.Code == tea.KeyUp {
			d2.m.input.MoveToBegin() // ↑ on the first line goes on to older entries
		}
	}
}
