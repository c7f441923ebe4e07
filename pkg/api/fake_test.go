package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// fakeService is a scripted engine.Service.
type fakeService struct {
	mu       sync.Mutex
	chatReq  engine.ChatRequest
	compReq  engine.CompletionRequest
	reqID    string // the request id the engine was given
	loadReq  engine.LoadRequest
	unloaded []string
	deltas   []engine.Delta
	result   engine.Result
	err      error // returned before any delta
	midErr   error // returned after the deltas
	block    bool  // wait for ctx cancellation after the deltas
	// flood > 0 sends deltas of that many bytes until onDelta fails, then
	// reports the failure on flooded.
	flood    int
	flooded  chan error
	canceled chan struct{}
	models   []engine.ModelStatus
	details  engine.ModelDetails
}

func (f *fakeService) generate(ctx context.Context, onDelta func(engine.Delta) error) (engine.Result, error) {
	if f.err != nil {
		return engine.Result{}, f.err
	}
	if f.flood > 0 {
		d := engine.Delta{Content: strings.Repeat("x", f.flood)}
		for {
			if err := onDelta(d); err != nil {
				f.flooded <- err
				return engine.Result{}, err
			}
		}
	}
	for _, d := range f.deltas {
		if err := onDelta(d); err != nil {
			if f.block { // the client went away while deltas were still going out
				close(f.canceled)
			}
			return engine.Result{}, err
		}
	}
	if f.block {
		<-ctx.Done()
		close(f.canceled)
		return engine.Result{FinishReason: "cancelled"}, ctx.Err()
	}
	if f.midErr != nil {
		return engine.Result{}, f.midErr
	}
	return f.result, nil
}

func (f *fakeService) Chat(ctx context.Context, req engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	f.mu.Lock()
	f.chatReq = req
	f.reqID = engine.RequestIDFrom(ctx)
	f.mu.Unlock()
	return f.generate(ctx, onDelta)
}

func (f *fakeService) Complete(ctx context.Context, req engine.CompletionRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	f.mu.Lock()
	f.compReq = req
	f.reqID = engine.RequestIDFrom(ctx)
	f.mu.Unlock()
	return f.generate(ctx, onDelta)
}

func (f *fakeService) Load(_ context.Context, req engine.LoadRequest) (engine.ModelStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loadReq = req
	if f.err != nil {
		return engine.ModelStatus{}, f.err
	}
	return engine.ModelStatus{Name: req.Model, State: engine.StateReady, Context: req.NumCtx}, nil
}

func (f *fakeService) Unload(_ context.Context, model string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unloaded = append(f.unloaded, model)
	return f.err
}

func (f *fakeService) PS(context.Context) ([]engine.ModelStatus, error) { return f.models, nil }

func (f *fakeService) Show(_ context.Context, model string) (engine.ModelDetails, error) {
	if f.err != nil {
		return engine.ModelDetails{}, f.err
	}
	d := f.details
	d.Name = model
	return d, nil
}

func (f *fakeService) lastChat() engine.ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.chatReq
}

// newTestServer starts an httptest server over f.
func newTestServer(t *testing.T, f *fakeService, mod func(*Config)) *httptest.Server {
	t.Helper()
	cfg := Config{Service: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// post sends a JSON body and returns the status and body.
func post(t *testing.T, ts *httptest.Server, path, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func get(t *testing.T, ts *httptest.Server, path string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sseEvents splits an SSE body into its data payloads, checking framing.
func sseEvents(t *testing.T, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("SSE body does not end with a blank line: %q", body)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed SSE event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

func decodeChunk(t *testing.T, data string) ChatCompletionChunk {
	t.Helper()
	var ch ChatCompletionChunk
	if err := json.Unmarshal([]byte(data), &ch); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	return ch
}

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}]`

func stdDeltas() []engine.Delta {
	return []engine.Delta{
		{Reasoning: "think", Tokens: []engine.TokenInfo{{ID: 7, Text: "think"}}},
		{Content: "Hel", Tokens: []engine.TokenInfo{{ID: 1, Text: "Hel"}}},
		{Content: "lo", Tokens: []engine.TokenInfo{{ID: 2, Text: "lo"}}},
	}
}

func stdResult() engine.Result {
	return engine.Result{FinishReason: "stop", Usage: engine.Usage{
		PromptTokens: 10, CachedTokens: 4, CompletionTokens: 3,
		PrefillDuration: 60 * time.Millisecond, DecodeDuration: 30 * time.Millisecond, LoadDuration: time.Second,
	}}
}
