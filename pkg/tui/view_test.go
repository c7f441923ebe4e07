package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/helexa/helexa/pkg/engine"
)

// numbered is an answer of n lines "line 1" … "line n".
func numbered(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	return strings.Join(lines, "\n")
}

// hasLine reports whether some screen line, trimmed, is exactly s.
func hasLine(screen, s string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}

func TestScrollTranscript(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		if err := onDelta(engine.Delta{Content: numbered(100) + "\n"}); err != nil {
			return engine.Result{}, err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return engine.Result{}, ctx.Err()
		}
		if err := onDelta(engine.Delta{Content: "the end"}); err != nil {
			return engine.Result{}, err
		}
		return engine.Result{FinishReason: "stop"}, nil
	}
	d := newDriver(t, svc, nil)
	d.typeText("long please")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && strings.Contains(d.m.gen.entry.text, "line 100") })
	if scr := d.screen(); !hasLine(scr, "line 100") {
		t.Fatalf("a streaming answer does not follow the end:\n%s", scr)
	}
	bottom := d.m.vp.YOffset()
	d.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	d.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	scrolled := d.screen()
	top := d.m.vp.YOffset()
	if hasLine(scrolled, "line 100") || top != bottom-2*d.m.vp.Height() {
		t.Fatalf("PgUp twice moved from line %d to %d (view height %d):\n%s", bottom, top, d.m.vp.Height(), scrolled)
	}
	close(release) // text arriving while scrolled up does not yank the view
	d.settle(func() bool { return d.m.gen == nil })
	if scr := d.screen(); d.m.vp.YOffset() != top || strings.Contains(scr, "the end") {
		t.Errorf("new text moved a transcript the user had scrolled up (offset %d, was %d):\n%s", d.m.vp.YOffset(), top, scr)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if got := d.m.vp.YOffset(); got != top+d.m.vp.Height() {
		t.Errorf("PgDn moved from line %d to %d", top, got)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyEnd})
	if scr := d.screen(); !strings.Contains(scr, "the end") {
		t.Errorf("End on an empty input should show the end:\n%s", scr)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyHome})
	if scr := d.screen(); !strings.Contains(scr, "Chatting with") {
		t.Errorf("Home on an empty input should show the start:\n%s", scr)
	}
}

func TestResizeKeepsEnd(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{CompletionTokens: 101}, engine.Delta{Content: numbered(100) + "\n\nthe end"})}
	d := newDriver(t, svc, nil)
	d.say("long please")
	for _, sz := range []struct{ w, h int }{{60, 20}, {40, 12}, {130, 40}, {100, 30}} {
		d.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
		scr := d.screen()
		if !strings.Contains(scr, "the end") || !strings.Contains(scr, "101 tokens") {
			t.Errorf("at %dx%d the transcript no longer shows its end:\n%s", sz.w, sz.h, scr)
		}
	}
}

func TestViewFitsWidth(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{PromptTokens: 9, CompletionTokens: 5, DecodeDuration: time.Second},
		engine.Delta{Content: "An answer with a long line that has to wrap at narrow widths, and `code`."})}
	for _, w := range []int{20, 40, 80} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			d := newDriver(t, svc, func(c *Config) { c.Model = "/models/some-rather-long-model-name-Q4_K_M.gguf" })
			d.say("hello")
			d.ctrl('c') // the status line then holds its longest hint
			d.send(tea.WindowSizeMsg{Width: w, Height: 20})
			view := d.m.View().Content
			for i, l := range strings.Split(view, "\n") {
				if lw := lipgloss.Width(l); lw > w {
					t.Errorf("line %d is %d cells wide in a %d-cell window: %q", i, lw, w, l)
				}
			}
			contains(t, "screen", d.screen(), "some-rather")
		})
	}
}

func TestFitLine(t *testing.T) {
	tests := []struct {
		left, right string
		width       int
		want        string
	}{
		{"model · ctx 1/2", "/help", 22, "model · ctx 1/2  /help"},
		{"model · ctx 1/2", "/help", 20, "model · ctx 1/2"},
		{"model · ctx 1/2", "/help", 10, "model · c…"},
		{"abc", "x", 0, "…"},
	}
	for _, tt := range tests {
		if got := fitLine(tt.left, tt.right, tt.width); got != tt.want {
			t.Errorf("fitLine(%q, %q, %d) = %q, want %q", tt.left, tt.right, tt.width, got, tt.want)
		}
	}
}

func TestMarkdownKeepsLineBreaks(t *testing.T) {
	svc := &fakeService{chat: streamReply(engine.Usage{}, engine.Delta{Content: "Roses are red,\nviolets are **blue**.\n\n- one\n- two"})}
	d := newDriver(t, svc, nil)
	d.say("a poem")
	scr := d.screen()
	for _, l := range []string{"Roses are red,", "violets are blue.", "• one", "• two"} {
		if !hasLine(scr, l) {
			t.Errorf("the rendered answer lacks the line %q:\n%s", l, scr)
		}
	}
}

func TestThinkingIsDimmed(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		_ = onDelta(engine.Delta{Reasoning: "mulling"})
		<-release
		return engine.Result{FinishReason: "stop"}, onDelta(engine.Delta{Content: "ok"})
	}
	d := newDriver(t, svc, nil)
	d.typeText("q")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && d.m.gen.entry.reasoning != "" })
	var line string
	for _, l := range strings.Split(d.m.View().Content, "\n") {
		if strings.Contains(l, "mulling") {
			line = l
		}
	}
	if faint := strings.TrimSuffix(styleThinking.Render("x"), "x\x1b[m"); faint == "" || !strings.HasPrefix(line, faint) {
		t.Errorf("streaming reasoning is not drawn with the thinking style %q: %q", faint, line)
	}
	close(release)
	d.settle(func() bool { return d.m.gen == nil })
}
