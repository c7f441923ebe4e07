package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/sampling"
)

// panicLoader panics while loading models whose name starts with "panic".
type panicLoader struct{ *fakeLoader }

func (p panicLoader) Load(ctx context.Context, name string, opts LoadOptions) (*Model, error) {
	if strings.HasPrefix(name, "panic") {
		panic("corrupt tensor table")
	}
	return p.fakeLoader.Load(ctx, name, opts)
}

func TestLoaderPanicIsAnErrorNotAWedge(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	m.loader = panicLoader{l}
	for i := range 2 { // the second try must not wait for a load that never ends
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		o := complete(ctx, m, CompletionRequest{Model: "panic-model", Prompt: "x"})
		cancel()
		if kindOf(o.err) != KindInternal || !strings.Contains(o.err.Error(), "corrupt tensor table") {
			t.Fatalf("try %d: %v, want an internal error naming the panic", i, o.err)
		}
	}
	if ps, _ := m.PS(context.Background()); len(ps) != 0 {
		t.Errorf("a failed load is still listed: %+v", ps)
	}
	if o := complete(context.Background(), m, seeded("fine", 1, 3)); o.err != nil {
		t.Errorf("another model after the panic: %v", o.err)
	}
}

// panicTok panics while encoding text that contains "boom".
type panicTok struct{ *fakeTok }

func (p panicTok) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if strings.Contains(text, "boom") {
		panic("index out of range in the pre-tokenizer")
	}
	return p.fakeTok.Encode(text, addSpecial, parseSpecial)
}

// panicTemplate panics while rendering a message saying "crash".
type panicTemplate struct{ fakeTemplate }

func (p panicTemplate) Render(ctx context.Context, in ChatInput) (string, error) {
	if strings.Contains(string(in.Messages), "crash") {
		panic("nil map in the template engine")
	}
	return p.fakeTemplate.Render(ctx, in)
}

// wrapLoader adjusts every model its fakeLoader builds.
type wrapLoader struct {
	*fakeLoader
	wrap func(*Model)
}

func (w wrapLoader) Load(ctx context.Context, name string, opts LoadOptions) (*Model, error) {
	m, err := w.fakeLoader.Load(ctx, name, opts)
	if err == nil {
		w.wrap(m)
	}
	return m, err
}

func TestInputPanicsFailOnlyTheRequest(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	m.loader = wrapLoader{l, func(md *Model) {
		md.Tokenizer = panicTok{md.Tokenizer.(*fakeTok)}
		md.Template = panicTemplate{}
	}}
	chat := func(content string) error {
		_, err := m.Chat(context.Background(), ChatRequest{Model: "toy",
			Messages: []byte(`[{"role":"user","content":"` + content + `"}]`), Options: Options{MaxTokens: 3}}, nil)
		return err
	}
	tests := []struct {
		name string
		run  func() error
		kind Kind
		want string
	}{
		{"tokenizer panic in a completion", func() error { return complete(context.Background(), m, seeded("boom", 1, 3)).err },
			KindInternal, "pre-tokenizer"},
		{"tokenizer panic in a chat", func() error { return chat("boom") }, KindInternal, "pre-tokenizer"},
		{"template panic", func() error { return chat("crash") }, KindInternal, "template engine"},
		{"template error", func() error {
			_, err := m.Chat(context.Background(), ChatRequest{Model: "toy", Messages: []byte(`{}`)}, nil)
			return err
		}, KindBadRequest, "chat template"},
		{"healthy chat", func() error { return chat("hello") }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if kindOf(err) != tt.kind || (tt.want != "" && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("got %v, want kind %q mentioning %q", err, tt.kind, tt.want)
			}
		})
	}
	if n := activeOn(m, "toy"); n != 0 {
		t.Errorf("%d requests still hold the model", n)
	}
	if got := m.Metrics().Requests[string(KindInternal)]; got != 3 {
		t.Errorf("internal errors counted %d, want 3", got)
	}
}

// flushPanicDec panics when a stream of more than 20 tokens is flushed.
type flushPanicDec struct {
	Decoder
	n int
}

func (d *flushPanicDec) Add(id int32) string { d.n++; return d.Decoder.Add(id) }

func (d *flushPanicDec) Flush() string {
	if d.n > 20 {
		panic("half a UTF-8 sequence at the end")
	}
	return d.Decoder.Flush()
}

// textPanicTok panics on the text of one token.
type textPanicTok struct {
	*fakeTok
	bad int32
}

func (p textPanicTok) TokenText(id int32) string {
	if id == p.bad {
		panic("piece table out of range")
	}
	return p.fakeTok.TokenText(id)
}

// TestGenerationPanicsFailOnlyTheRequest: a panic in one request's own
// output processing inside the scheduler goroutine fails that request; the
// model and the other requests carry on.
func TestGenerationPanicsFailOnlyTheRequest(t *testing.T) {
	tests := []struct {
		name string
		wrap func(*Model)
		bad  CompletionRequest // fails with an internal error
		good CompletionRequest // runs beside it and succeeds
		want string
	}{
		{"decoder flush when the context fills",
			func(md *Model) {
				tok := md.Tokenizer.(*fakeTok)
				md.Tokenizer = flushTok{tok}
			},
			seeded("fill the context", 1, 0), seeded("short", 2, 4), "UTF-8"},
		{"token text in JSON mode",
			func(md *Model) { md.Tokenizer = textPanicTok{md.Tokenizer.(*fakeTok), 40} },
			func() CompletionRequest { r := seeded("json please", 1, 8); r.Options.JSONMode = true; return r }(),
			seeded("plain", 2, 4), "piece table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &fakeLoader{nctx: 64}
			m := newTestManager(t, l, nil)
			m.loader = wrapLoader{l, tt.wrap}
			var bad, good output
			var wg sync.WaitGroup
			wg.Go(func() { bad = complete(context.Background(), m, tt.bad) })
			wg.Go(func() { good = complete(context.Background(), m, tt.good) })
			wg.Wait()
			if kindOf(bad.err) != KindInternal || !strings.Contains(bad.err.Error(), tt.want) {
				t.Errorf("the panicking request: %v, want an internal error mentioning %q", bad.err, tt.want)
			}
			if good.err != nil || len(good.tokens) == 0 {
				t.Errorf("the request beside it: %v (%d tokens)", good.err, len(good.tokens))
			}
			if o := complete(context.Background(), m, seeded("after", 3, 4)); o.err != nil {
				t.Errorf("a request after the panic: %v", o.err)
			}
			ps, _ := m.PS(context.Background())
			if len(ps) != 1 || ps[0].State != StateReady {
				t.Errorf("model state after the panic: %+v", ps)
			}
			ex := l.last()
			waitFor(t, "sequences freed", func() bool { return ex.liveSeqs() == 0 })
		})
	}
}

// flushTok hands out decoders whose Flush panics.
type flushTok struct{ *fakeTok }

func (f flushTok) NewDecoder() Decoder { return &flushPanicDec{Decoder: f.fakeTok.NewDecoder()} }

// TestSchedulerPanicPoisonsInsteadOfCrashing: a panic in engine code
// outside a step (here the executor's FreeSeq) must not take the process
// down: the model is poisoned, requests in flight fail, new ones are
// refused, and unloading recovers it.
func TestSchedulerPanicPoisonsInsteadOfCrashing(t *testing.T) {
	gate := make(chan struct{})
	first := true
	var mu sync.Mutex
	l := &fakeLoader{setup: func(f *fakeExec) {
		mu.Lock()
		defer mu.Unlock()
		if first {
			f.gate = gate
			f.freePanic = func(p sampling.Params) bool { return p.Seed == 2 }
			first = false
		}
	}}
	m := newTestManager(t, l, nil)
	if _, err := m.Load(context.Background(), LoadRequest{Model: "toy"}); err != nil {
		t.Fatal(err)
	}
	var long, short output
	var wg sync.WaitGroup
	wg.Go(func() { long = complete(context.Background(), m, seeded("a long one", 1, 0)) })
	gate <- struct{}{} // its prefill: over 100 steps are left
	wg.Go(func() { short = complete(context.Background(), m, seeded("short", 2, 2)) })
	waitFor(t, "both requests in flight", func() bool { return activeOn(m, "toy") == 2 })
	stepper := make(chan struct{})
	go func() { // release steps until the test ends
		for {
			select {
			case gate <- struct{}{}:
			case <-stepper:
				return
			}
		}
	}()
	defer close(stepper)
	wg.Wait()
	if short.err != nil || len(short.tokens) != 2 {
		t.Errorf("the request whose FreeSeq panicked still has its answer: %v, %d tokens", short.err, len(short.tokens))
	}
	if kindOf(long.err) != KindPoisoned || !strings.Contains(long.err.Error(), "double free") {
		t.Errorf("the request in flight: %v, want poisoned naming the panic", long.err)
	}
	ps, _ := m.PS(context.Background())
	if len(ps) != 1 || ps[0].State != StatePoisoned || !strings.Contains(ps[0].Error, "panic") {
		t.Fatalf("ps after the panic: %+v", ps)
	}
	if o := complete(context.Background(), m, seeded("recovered", 5, 3)); o.err != nil || len(o.tokens) != 3 {
		t.Errorf("after reload: %v, %d tokens", o.err, len(o.tokens))
	}
}
