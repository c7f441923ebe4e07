package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/helexa/helexa/pkg/engine"
)

// TestCtrlC: Ctrl+C on a draft only clears it; on an empty input the
// first Ctrl+C arms quitting and the second quits (docs/commands.md).
func TestCtrlC(t *testing.T) {
	tests := []struct {
		name      string
		steps     []string // text typed before each Ctrl+C
		wantQuit  bool
		wantArmed bool
	}{
		{"draft cleared, not armed", []string{"draft"}, false, false},
		{"draft then empty arms", []string{"draft", ""}, false, true},
		{"draft then empty twice quits", []string{"draft", "", ""}, true, false},
		{"empty arms", []string{""}, false, true},
		{"empty twice quits", []string{"", ""}, true, false},
		{"armed, then a draft cleared disarms", []string{"", "oops"}, false, false},
		{"armed, draft cleared, empty arms again", []string{"", "oops", ""}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t, &fakeService{}, nil)
			for _, s := range tt.steps {
				d.typeText(s)
				d.ctrl('c')
			}
			if tt.wantQuit {
				d.settle(func() bool { return d.quit })
				return
			}
			if d.m.quitting {
				t.Fatal("quit")
			}
			if got := d.m.input.Value(); got != "" {
				t.Errorf("input = %q, want it cleared", got)
			}
			armed := strings.Contains(d.screen(), "Ctrl+C again")
			if armed != tt.wantArmed || d.m.quitHint != tt.wantArmed {
				t.Errorf("quit armed = %v (hint shown %v), want %v", d.m.quitHint, armed, tt.wantArmed)
			}
		})
	}
}

// TestStatusLineLive: the context count moves while an answer streams,
// and the speed of answers from before a /load is not shown after it.
func TestStatusLineLive(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{details: engine.ModelDetails{Context: 2048}}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		for _, s := range []string{"one", " two", " three"} {
			if err := onDelta(engine.Delta{Content: s, Tokens: []engine.TokenInfo{{ID: 1}}}); err != nil {
				return engine.Result{}, err
			}
		}
		<-release
		return engine.Result{FinishReason: "stop", Usage: engine.Usage{PromptTokens: 20, CompletionTokens: 3, DecodeDuration: 50 * time.Millisecond}}, nil
	}
	d := newDriver(t, svc, func(c *Config) { c.Details.Context = 2048 })
	d.typeText("a question of 29 bytes, twice")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && d.m.gen.tokens == 3 })
	// 29 bytes ≈ 8 tokens of prompt, then 3 generated.
	contains(t, "status while streaming", statusOf(d.screen()), "ctx ~11/2048", "generating (3 tokens, ", " tok/s)")
	if strings.Contains(d.screen(), "ctx 0/") {
		t.Errorf("the status line shows an empty context while an answer streams:\n%s", d.screen())
	}
	close(release)
	d.settle(func() bool { return d.m.gen == nil })
	contains(t, "status after the answer", d.screen(), "ctx 23/2048", "40.0 tok/s")

	tests := []struct {
		name, line string
	}{
		{"another model", "/load other-model"},
		{"the same model", "/set num_ctx 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{chat: streamReply(engine.Usage{PromptTokens: 20, CompletionTokens: 3, DecodeDuration: 50 * time.Millisecond},
				engine.Delta{Content: "fine"})}
			d := newDriver(t, svc, nil)
			d.say("hi")
			contains(t, "status line before", statusOf(d.screen()), "40.0 tok/s")
			d.say(tt.line)
			if st := statusOf(d.screen()); strings.Contains(st, "tok/s") {
				t.Errorf("after %s the status line keeps the earlier speed: %q", tt.line, st)
			}
		})
	}
}

// statusOf is the status line of a screen.
func statusOf(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " · ctx ") {
			return l
		}
	}
	return ""
}

// TestTranscriptOnExit: what the terminal keeps after the chat is the
// whole conversation, /clear included, without the greeting.
func TestTranscriptOnExit(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{PromptTokens: 5, CompletionTokens: 2}, engine.Delta{Content: "an answer"})}
	d := newDriver(t, svc, nil)
	d.say("first question")
	d.say("/clear")
	d.say("second question")
	d.say("/bye")
	d.settle(func() bool { return d.quit })
	tr := ansi.Strip(d.m.Transcript())
	contains(t, "transcript", tr, "› first question", "an answer", "Conversation cleared.", "› second question")
	if strings.Index(tr, "first question") > strings.Index(tr, "second question") {
		t.Errorf("transcript out of order:\n%s", tr)
	}
	if strings.Contains(tr, "Chatting with") {
		t.Errorf("the transcript keeps the greeting:\n%s", tr)
	}
	if empty := newDriver(t, &fakeService{}, nil); empty.m.Transcript() != "" {
		t.Errorf("a chat with nothing said leaves %q", empty.m.Transcript())
	}
}

// TestRunLeavesTranscript: Run writes the conversation to the terminal
// after the UI has left the alternate screen.
func TestRunLeavesTranscript(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{PromptTokens: 5, CompletionTokens: 2}, engine.Delta{Content: "kept answer"})}
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Config{Service: svc, Model: "test-model", Details: engine.ModelDetails{Context: 4096}}, inR, out,
			tea.WithWindowSize(80, 24), tea.WithoutSignals())
	}()
	write := func(s string) {
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatal(err)
		}
	}
	write("hello there\r")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ansi.Strip(out.String()), "kept answer") {
		if time.Now().After(deadline) {
			t.Fatalf("the answer never showed: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	write("/bye\r")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("/bye did not end Run")
	}
	s := out.String()
	i := strings.LastIndex(s, "\x1b[?1049l") // the end of the alternate screen
	if i < 0 {
		t.Fatalf("the UI never left the alternate screen: %q", s)
	}
	contains(t, "output after the alternate screen", ansi.Strip(s[i:]), "› hello there", "kept answer")
}

// syncBuffer is a bytes.Buffer safe for the UI's writer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestContextHints: the hints for a full context say what can help: a
// larger num_ctx, or, at the model's trained maximum, shorter answers.
func TestContextHints(t *testing.T) {
	tests := []struct {
		name      string
		train     int
		want, not string
	}{
		{"room to grow", 8192, "/set num_ctx N loads the model with a larger context", "trained for"},
		{"trained size unknown", 0, "/set num_ctx N", "trained for"},
		{"at the trained maximum", 2048, "the most this model was trained for", "/set num_ctx N loads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{}
			svc.chat = func(context.Context, engine.ChatRequest, func(engine.Delta) error) (engine.Result, error) {
				return engine.Result{FinishReason: "length", Usage: engine.Usage{PromptTokens: 48, CompletionTokens: 2000}}, nil
			}
			d := newDriver(t, svc, func(c *Config) { c.Details = engine.ModelDetails{Context: 2048, ContextTrain: tt.train} })
			d.say("tell me everything")
			tr := d.transcript()
			contains(t, "transcript", tr, "context is full (2048 of 2048 tokens", tt.want)
			if strings.Contains(tr, tt.not) {
				t.Errorf("transcript holds %q:\n%s", tt.not, tr)
			}
		})
	}
}

// TestNumCtxAboveTrained: /set num_ctx above what the model was trained
// for says the context was capped.
func TestNumCtxAboveTrained(t *testing.T) {
	tests := []struct {
		line   string
		notice bool
	}{{"/set num_ctx 8192", true}, {"/set num_ctx 1024", false}, {"/set num_ctx 2048", false}}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			svc := &fakeService{details: engine.ModelDetails{ContextTrain: 2048}}
			d := newDriver(t, svc, nil)
			d.say(tt.line)
			got := strings.Contains(d.transcript(), "num_ctx 8192 is more than test-model was trained for: its context is 2048 tokens")
			if got != tt.notice {
				t.Errorf("capping notice shown = %v, want %v:\n%s", got, tt.notice, d.transcript())
			}
		})
	}
}

// TestSetRejectsAndKeeps: a refused /set value names the setting and
// leaves the current value as it was.
func TestSetRejectsAndKeeps(t *testing.T) {
	tests := []struct {
		line, want string
		check      func(*Model) bool
	}{
		{"/set temperature -1", "/set temperature: -1 is negative", func(m *Model) bool { return m.opts.Sampling.Temperature == 0.7 }},
		{"/set top_p 2", "top_p 2 is outside [0, 1]", func(m *Model) bool { return m.opts.Sampling.TopP == 0.9 }},
		{"/set num_predict lots", `/set num_predict: "lots" is not a non-negative integer`, func(m *Model) bool { return m.opts.MaxTokens == 50 }},
		{"/set seed -4", `/set seed: "-4" is not a non-negative integer`, func(m *Model) bool { return !m.seeded }},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			d := newDriver(t, &fakeService{}, func(c *Config) {
				c.Options.Sampling.Temperature, c.Options.Sampling.TopP, c.Options.MaxTokens = 0.7, 0.9, 50
			})
			d.say(tt.line)
			contains(t, "transcript", d.transcript(), tt.want)
			if !tt.check(d.m) {
				t.Errorf("the refused value changed the settings: %+v", d.m.opts)
			}
		})
	}
}
