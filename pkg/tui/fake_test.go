package tui

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/helexa/helexa/pkg/engine"
)

// fakeService is a scripted engine.Service.
type fakeService struct {
	mu      sync.Mutex
	chats   []engine.ChatRequest
	loads   []engine.LoadRequest
	details engine.ModelDetails
	// loadGate, when set, holds every Load until it is closed; showGate
	// every Show, which then fails with showErr when set.
	loadGate chan struct{}
	showGate chan struct{}
	showErr  error
	chat     func(ctx context.Context, req engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error)
}

func (f *fakeService) Chat(ctx context.Context, req engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	f.mu.Lock()
	f.chats = append(f.chats, req)
	fn := f.chat
	f.mu.Unlock()
	return fn(ctx, req, onDelta)
}

func (f *fakeService) Complete(context.Context, engine.CompletionRequest, func(engine.Delta) error) (engine.Result, error) {
	return engine.Result{}, engine.Errorf(engine.KindBadRequest, "not used")
}

func (f *fakeService) Load(lctx context.Context, req engine.LoadRequest) (engine.ModelStatus, error) {
	if f.loadGate != nil {
		select {
		case <-f.loadGate:
		case <-lctx.Done():
			return engine.ModelStatus{}, lctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, req)
	ctx := req.NumCtx
	if ctx == 0 {
		ctx = 4096
	}
	if t := f.details.ContextTrain; t > 0 && ctx > t {
		ctx = t // capped at the trained context, as the loader does
	}
	f.details.Context = ctx
	return engine.ModelStatus{Name: req.Model, Context: ctx, State: engine.StateReady}, nil
}

func (f *fakeService) Unload(context.Context, string) error { return nil }

func (f *fakeService) PS(context.Context) ([]engine.ModelStatus, error) { return nil, nil }

func (f *fakeService) Show(ctx context.Context, model string) (engine.ModelDetails, error) {
	if f.showGate != nil {
		select {
		case <-f.showGate:
		case <-ctx.Done():
			return engine.ModelDetails{}, ctx.Err()
		}
	}
	if f.showErr != nil {
		return engine.ModelDetails{}, f.showErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.details
	d.Name = model
	return d, nil
}

func (f *fakeService) requests() []engine.ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]engine.ChatRequest(nil), f.chats...)
}

// streamReply answers with the given deltas and usage.
func streamReply(usage engine.Usage, deltas ...engine.Delta) func(context.Context, engine.ChatRequest, func(engine.Delta) error) (engine.Result, error) {
	return func(ctx context.Context, _ engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
		for _, d := range deltas {
			if err := onDelta(d); err != nil {
				return engine.Result{FinishReason: "cancelled", Usage: usage}, err
			}
		}
		return engine.Result{FinishReason: "stop", Usage: usage}, nil
	}
}

// driver runs the model's update loop the way bubbletea does: commands
// run concurrently and their messages are fed back (timers and cursor
// blinks are dropped so the loop ends).
type driver struct {
	t        *testing.T
	m        *Model
	results  chan tea.Msg
	inflight int
	quit     bool
}

func newDriver(t *testing.T, svc engine.Service, mut func(*Config)) *driver {
	t.Helper()
	cfg := Config{Service: svc, Model: "test-model", Details: engine.ModelDetails{Context: 4096}}
	if mut != nil {
		mut(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := &driver{t: t, m: New(ctx, cfg), results: make(chan tea.Msg, 1024)}
	d.push(d.m.Init())
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	return d
}

func (d *driver) push(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	d.inflight++
	go func() { d.results <- cmd() }()
}

func (d *driver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.push(cmd)
}

// settle feeds command results back until cond holds.
func (d *driver) settle(cond func() bool) {
	d.t.Helper()
	timeout := time.After(10 * time.Second)
	for !cond() {
		if d.inflight == 0 {
			d.t.Fatalf("condition never held; screen:\n%s", d.screen())
		}
		select {
		case msg := <-d.results:
			d.inflight--
			d.dispatch(msg)
		case <-timeout:
			d.t.Fatalf("timed out; screen:\n%s", d.screen())
		}
	}
}

func (d *driver) dispatch(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			d.push(c)
		}
	case tea.QuitMsg:
		d.quit = true
	case deltaMsg, doneMsg, loadedMsg, progressMsg, shownMsg:
		d.send(msg)
	}
}

func (d *driver) typeText(s string) {
	for _, r := range s {
		if r == '\n' {
			d.key(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
			continue
		}
		d.key(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (d *driver) key(k tea.KeyPressMsg) { d.send(k) }

func (d *driver) enter() { d.key(tea.KeyPressMsg{Code: tea.KeyEnter}) }

func (d *driver) ctrl(r rune) { d.key(tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl}) }

// say types a line, sends it and runs until the UI is idle.
func (d *driver) say(s string) {
	d.typeText(s)
	d.enter()
	d.settle(func() bool { return d.m.gen == nil && d.m.loading == nil && !d.m.showing })
}

// screen is the rendered view without ANSI codes.
func (d *driver) screen() string { return ansi.Strip(d.m.View().Content) }

// transcript is the whole transcript (not just the visible part).
func (d *driver) transcript() string { return ansi.Strip(d.m.vp.GetContent()) }

func messagesOf(t *testing.T, req engine.ChatRequest) []Message {
	t.Helper()
	var ms []Message
	if err := json.Unmarshal(req.Messages, &ms); err != nil {
		t.Fatalf("messages %s: %v", req.Messages, err)
	}
	return ms
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}
