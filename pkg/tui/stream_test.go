package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestStoppedWithoutUsage: a daemon's stream cut by Ctrl+C reports no
// usage; the answer's footer counts the tokens that arrived.
func TestStoppedWithoutUsage(t *testing.T) {
	svc := &fakeService{}
	svc.chat = func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		for _, s := range []string{"one", " two", " three"} {
			_ = onDelta(engine.Delta{Content: s, Tokens: []engine.TokenInfo{{ID: 1}}})
		}
		<-ctx.Done()
		return engine.Result{}, ctx.Err()
	}
	d := newDriver(t, svc, nil)
	d.typeText("count")
	d.enter()
	d.settle(func() bool { return d.m.gen != nil && d.m.gen.tokens == 3 })
	d.ctrl('c')
	d.settle(func() bool { return d.m.gen == nil })
	contains(t, "screen", d.screen(), "[stopped] · 3 tokens")
}

// TestReloadSmallerContext: /set num_ctx below the conversation's size
// says the conversation no longer fits.
func TestReloadSmallerContext(t *testing.T) {
	svc := &fakeService{
		details: engine.ModelDetails{Context: 4096},
		chat:    streamReply(engine.Usage{PromptTokens: 30, CompletionTokens: 10}, engine.Delta{Content: "fine"}),
	}
	tests := []struct {
		numCtx string
		notice bool
	}{{"64", false}, {"32", true}}
	for _, tt := range tests {
		t.Run(tt.numCtx, func(t *testing.T) {
			d := newDriver(t, svc, nil)
			d.say("hi")
			d.say("/set num_ctx " + tt.numCtx)
			got := strings.Contains(d.transcript(), "does not fit the new context of "+tt.numCtx)
			if got != tt.notice {
				t.Errorf("notice shown = %v, want %v:\n%s", got, tt.notice, d.transcript())
			}
		})
	}
}

// TestLoadProgress: /load shows the loader's progress in the status line
// and Ctrl+C stops it.
func TestLoadProgress(t *testing.T) {
	progress := make(chan string, 1)
	svc := &fakeService{loadGate: make(chan struct{})}
	d := newDriver(t, svc, func(c *Config) { c.Progress = progress })
	d.typeText("/load org/repo:Q8_0")
	d.enter()
	progress <- "downloading m-Q8_0.gguf 42% of 1.0 GiB"
	d.settle(func() bool { return d.m.loading != nil && d.m.loading.progress != "" })
	contains(t, "status line while loading", d.screen(), "loading org/repo:Q8_0", "downloading m-Q8_0.gguf 42%", "Ctrl+C stops")
	d.ctrl('c')
	d.settle(func() bool { return d.m.loading == nil })
	contains(t, "transcript", d.transcript(), "Loading org/repo:Q8_0 stopped.")
	if d.m.model != "test-model" || d.quit {
		t.Errorf("after a stopped /load: model %q, quit %v", d.m.model, d.quit)
	}
}

// TestShowInfoAsync: /show info asks the service off the update loop, so
// the UI keeps answering keys while a daemon takes its time.
func TestShowInfoAsync(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"answer", nil, "architecture qwen3"},
		{"error", engine.Errorf(engine.KindNotFound, "model %q is not loaded", "test-model"), `error: /show info: model "test-model" is not loaded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{details: engine.ModelDetails{Arch: "qwen3", Context: 4096}, showGate: make(chan struct{}), showErr: tt.err}
			d := newDriver(t, svc, nil)
			d.typeText("/show info")
			d.enter()
			d.typeText("still typing")
			if got := d.m.input.Value(); got != "still typing" || !d.m.showing {
				t.Fatalf("while /show info waits: input %q, showing %v", got, d.m.showing)
			}
			close(svc.showGate)
			d.settle(func() bool { return !d.m.showing })
			contains(t, "transcript", d.transcript(), tt.want)
		})
	}
}
