package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

func newTestClient(t *testing.T, f *fakeService, mod func(*Config)) *Client {
	t.Helper()
	ts := newTestServer(t, f, mod)
	c, err := NewClient(ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientChatRoundTrip(t *testing.T) {
	deltas := stdDeltas()
	deltas[1].Tokens[0].Logprob = -0.5
	deltas[1].Tokens[0].Top = []executor.TokenLogprob{{Token: 1, Logprob: -0.5}, {Token: 9, Logprob: -1.5}}
	deltas[1].Tokens[0].TopText = []string{"Hel", "Bye"}
	f := &fakeService{deltas: deltas, result: stdResult()}
	c := newTestClient(t, f, nil)
	keep := 3 * time.Minute
	req := engine.ChatRequest{
		Model:          "org/repo:Q4_K_M",
		Messages:       json.RawMessage(`[{"role":"user","content":"hi"}]`),
		Tools:          json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`),
		TemplateKwargs: map[string]any{"enable_thinking": true},
		Options: engine.Options{
			Sampling: sampling.Params{Temperature: 0.7, TopK: 20, TopP: 0.8, MinP: 0.1, RepeatPenalty: 1.2,
				RepeatLastN: 32, PresencePenalty: 0.3, FrequencyPenalty: 0.4, LogitBias: map[int32]float32{3: 2}, Seed: 1 << 63},
			MaxTokens: 9, Stop: []string{"x", "y"}, Logprobs: true, TopLogprobs: 2, JSONMode: true,
			KeepAlive: &keep, NumCtx: 2048,
		},
	}
	var got []engine.Delta
	res, err := c.Chat(context.Background(), req, func(d engine.Delta) error {
		got = append(got, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sent := f.lastChat(); !reflect.DeepEqual(sent, req) {
		t.Errorf("the server's runner request differs:\n got %+v\nwant %+v", sent, req)
	}
	if len(got) != 3 || got[0].Reasoning != "think" || got[1].Content != "Hel" || got[2].Content != "lo" {
		t.Fatalf("deltas %+v", got)
	}
	tok := got[1].Tokens[0]
	if tok.ID != 1 || tok.Text != "Hel" || tok.Logprob != -0.5 || len(tok.Top) != 2 || tok.Top[1].Token != 9 || tok.TopText[1] != "Bye" {
		t.Errorf("token info %+v", tok)
	}
	want := stdResult()
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
}

func TestClientTokenIDsWithoutLogprobs(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	c := newTestClient(t, f, nil)
	var ids []int32
	_, err := c.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"x"}]`)},
		func(d engine.Delta) error {
			for _, tk := range d.Tokens {
				ids = append(ids, tk.ID)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []int32{7, 1, 2}) {
		t.Errorf("token ids %v", ids)
	}
}

func TestClientComplete(t *testing.T) {
	f := &fakeService{deltas: stdDeltas()[1:], result: stdResult()}
	c := newTestClient(t, f, nil)
	var text strings.Builder
	req := engine.CompletionRequest{Model: "m", Prompt: "Once", AddSpecial: false, Options: engine.Options{MaxTokens: 4}}
	res, err := c.Complete(context.Background(), req, func(d engine.Delta) error {
		text.WriteString(d.Content)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "Hello" || res.FinishReason != "stop" || res.Usage.CachedTokens != 4 {
		t.Errorf("text %q result %+v", text.String(), res)
	}
	if f.compReq.AddSpecial || f.compReq.Options.MaxTokens != 4 {
		t.Errorf("runner request %+v", f.compReq)
	}
}

func TestClientErrorKinds(t *testing.T) {
	kinds := []engine.Kind{engine.KindBadRequest, engine.KindNotFound, engine.KindContextLength, engine.KindBusy,
		engine.KindNoMemory, engine.KindPoisoned, engine.KindUnauthorized, engine.KindInternal}
	msgs := json.RawMessage(`[{"role":"user","content":"x"}]`)
	for _, k := range kinds {
		f := &fakeService{err: engine.Errorf(k, "failed: %s", k)}
		c := newTestClient(t, f, nil)
		_, err := c.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: msgs}, func(engine.Delta) error { return nil })
		var re *engine.Error
		if !errors.As(err, &re) || re.Kind != k || re.Msg != "failed: "+string(k) {
			t.Errorf("chat %s: got %#v", k, err)
		}
		_, err = c.Load(context.Background(), engine.LoadRequest{Model: "m"})
		if !errors.As(err, &re) || re.Kind != k {
			t.Errorf("load %s: got %#v", k, err)
		}
	}
	// An error after output arrives as an error event.
	f := &fakeService{deltas: stdDeltas(), midErr: engine.Errorf(engine.KindPoisoned, "device lost")}
	c := newTestClient(t, f, nil)
	_, err := c.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: msgs}, func(engine.Delta) error { return nil })
	var re *engine.Error
	if !errors.As(err, &re) || re.Kind != engine.KindPoisoned {
		t.Errorf("mid-stream: %#v", err)
	}
}

func TestClientCallbackErrorCancels(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), block: true, canceled: make(chan struct{})}
	c := newTestClient(t, f, nil)
	stop := errors.New("enough")
	_, err := c.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"x"}]`)},
		func(engine.Delta) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err %v, want the callback's error", err)
	}
	select {
	case <-f.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server-side generation was not cancelled")
	}
}

func TestClientNative(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{{Name: "m", State: engine.StateReady, Context: 4096}},
		details: engine.ModelDetails{Arch: "llama", Context: 4096}}
	var mu sync.Mutex
	pulled := []PullProgress{}
	puller := PullFunc(func(_ context.Context, model string, progress func(PullProgress)) error {
		if model == "bad/repo" {
			return engine.Errorf(engine.KindNotFound, "repo bad/repo not found")
		}
		progress(PullProgress{Status: "downloading", File: "a.gguf", Completed: 5, Total: 10})
		progress(PullProgress{Status: "downloading", File: "a.gguf", Completed: 10, Total: 10})
		return nil
	})
	c := newTestClient(t, f, func(cfg *Config) { cfg.Puller = puller; cfg.APIKey = "k" })
	if _, err := c.PS(context.Background()); !isKind(err, engine.KindUnauthorized) {
		t.Errorf("without key: %v", err)
	}
	c.apiKey = "k"
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := c.PS(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "m" {
		t.Errorf("ps %+v %v", ps, err)
	}
	keep := -time.Nanosecond
	st, err := c.Load(ctx, engine.LoadRequest{Model: "x", NumCtx: 99, KeepAlive: &keep})
	if err != nil || st.Name != "x" || *f.loadReq.KeepAlive != keep {
		t.Errorf("load %+v %v", st, err)
	}
	if err := c.Unload(ctx, "x"); err != nil || f.unloaded[0] != "x" {
		t.Errorf("unload %v", err)
	}
	if d, err := c.Show(ctx, "x"); err != nil || d.Name != "x" || d.Arch != "llama" {
		t.Errorf("show %+v %v", d, err)
	}
	if ms, err := c.Models(ctx); err != nil || len(ms) != 1 || ms[0].State != "ready" {
		t.Errorf("models %+v %v", ms, err)
	}
	if txt, err := c.MetricsText(ctx); err != nil || !strings.Contains(txt, "helexa_models_loaded 1") {
		t.Errorf("metrics %v: %s", err, txt)
	}
	err = c.Pull(ctx, "org/repo", func(p PullProgress) {
		mu.Lock()
		pulled = append(pulled, p)
		mu.Unlock()
	})
	if err != nil || len(pulled) != 3 || pulled[1].Completed != 10 || pulled[2].Status != "success" {
		t.Errorf("pull %v: %+v", err, pulled)
	}
	if err := c.Pull(ctx, "bad/repo", nil); !isKind(err, engine.KindNotFound) {
		t.Errorf("pull of a missing repo: %v", err)
	}
}

func isKind(err error, k engine.Kind) bool {
	var re *engine.Error
	return errors.As(err, &re) && re.Kind == k
}

func TestClientUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := NewClient(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	err = c.Health(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "helexa serve") {
		t.Errorf("err %v, want ErrUnreachable with a hint", err)
	}
}

func TestBaseURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"127.0.0.1:13131", "http://127.0.0.1:13131"},
		{":8080", "http://127.0.0.1:8080"},
		{"0.0.0.0:8080", "http://127.0.0.1:8080"},
		{"[::]:8080", "http://127.0.0.1:8080"},
		{"http://example.com:80/", "http://example.com:80"},
		{"https://h:443", "https://h:443"},
		{"", "http://127.0.0.1:13131"},
	}
	for _, c := range cases {
		u, err := BaseURL(c.in)
		if err != nil || u.String() != c.want {
			t.Errorf("BaseURL(%q) = %v, %v; want %s", c.in, u, err, c.want)
		}
	}
	for _, bad := range []string{"ftp://h:1", "localhost", "http://"} {
		if _, err := BaseURL(bad); err == nil {
			t.Errorf("BaseURL(%q) accepted", bad)
		}
	}
}
