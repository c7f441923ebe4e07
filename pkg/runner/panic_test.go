package runner

import (
	"context"
	"strings"
	"testing"
	"time"
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
