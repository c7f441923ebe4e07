package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

const messagesBody = `{"model":"m","max_tokens":32,"messages":[{"role":"user","content":"hi"}]`

// countingService is a fakeService that also counts tokens.
type countingService struct {
	*fakeService
	n   int
	req engine.ChatRequest
}

func (c *countingService) CountTokens(_ context.Context, req engine.ChatRequest) (int, error) {
	c.req = req
	return c.n, c.err
}

// namedSSE splits an SSE body into (event, data) pairs, checking framing.
func namedSSE(t *testing.T, body string) [][2]string {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("SSE body does not end with a blank line: %q", body)
	}
	var out [][2]string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(ev, "\n")
		name, ok1 := strings.CutPrefix(name, "event: ")
		data, ok2 := strings.CutPrefix(data, "data: ")
		if !ok || !ok1 || !ok2 || strings.Contains(data, "\n") {
			t.Fatalf("malformed SSE event %q", ev)
		}
		out = append(out, [2]string{name, data})
	}
	return out
}

// TestMessagesNonStreamed: the answer's content blocks, stop reason and
// usage (cache reads from the prefix cache).
func TestMessagesNonStreamed(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	st, out := post(t, ts, "/v1/messages", messagesBody+`}`, "anthropic-version", "2023-06-01")
	if st != 200 {
		t.Fatalf("%d %s", st, out)
	}
	var m MessagesResponse
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	content, _ := json.Marshal(m.Content)
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "m" ||
		string(content) != `[{"type":"thinking","thinking":"think","signature":""},{"type":"text","text":"Hello"}]` ||
		*m.StopReason != "end_turn" || m.StopSequence != nil ||
		m.Usage != (AnthropicUsage{InputTokens: 6, CacheReadInputTokens: 4, OutputTokens: 3}) {
		t.Errorf("message %s", out)
	}
	if f.reqID != m.ID || f.lastChat().Options.MaxTokens != 32 {
		t.Errorf("engine request id %q, max tokens %d", f.reqID, f.lastChat().Options.MaxTokens)
	}
}

// TestMessagesStreamed: Anthropic's event sequence, ending with the stop
// reason and the whole usage.
func TestMessagesStreamed(t *testing.T) {
	f := &fakeService{deltas: append(stdDeltas(), engine.Delta{ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}}),
		result: engine.Result{FinishReason: "tool_calls", Usage: engine.Usage{PromptTokens: 10, CachedTokens: 4, CompletionTokens: 5}}}
	ts := newTestServer(t, f, nil)
	st, out := post(t, ts, "/v1/messages", messagesBody+`,"stream":true}`)
	if st != 200 {
		t.Fatalf("%d %s", st, out)
	}
	evs := namedSSE(t, out)
	var names []string
	for _, ev := range evs {
		names = append(names, ev[0])
	}
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop " +
		"message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v\nwant %s", names, want)
	}
	var start messageStartEvent
	if err := json.Unmarshal([]byte(evs[0][1]), &start); err != nil || !strings.HasPrefix(start.Message.ID, "msg_") ||
		start.Message.Content == nil || start.Message.StopReason != nil {
		t.Errorf("message_start %s", evs[0][1])
	}
	wantDelta := `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},` +
		`"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,"output_tokens":5}}`
	if got := evs[len(evs)-2][1]; got != wantDelta {
		t.Errorf("message_delta %s\nwant %s", got, wantDelta)
	}
}

// TestMessagesStopSequence: the stop sequence that ended the answer.
func TestMessagesStopSequence(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: engine.Result{FinishReason: "stop", StopSequence: "END"}}
	ts := newTestServer(t, f, nil)
	_, out := post(t, ts, "/v1/messages", messagesBody+`,"stop_sequences":["END"]}`)
	if !strings.Contains(out, `"stop_reason":"stop_sequence","stop_sequence":"END"`) {
		t.Errorf("%s", out)
	}
}

// TestMessagesErrors: errors on the Messages paths are in Anthropic's
// shape, with the status the same failure has on the OpenAI routes;
// pre-flight, key, body cap and browser guard apply.
func TestMessagesErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		mod     func(*Config)
		path    string
		body    string
		headers []string
		status  int
		typ     string
	}{
		{"no max_tokens", nil, nil, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil, 400, "invalid_request_error"},
		{"not JSON", nil, nil, "/v1/messages", `{`, nil, 400, "invalid_request_error"},
		{"unknown model", engine.Errorf(engine.KindNotFound, "no model"), nil, "/v1/messages", messagesBody + `}`, nil, 404, "not_found_error"},
		{"pre-flight: prompt too long", engine.Errorf(engine.KindContextLength, "too long"), nil, "/v1/messages", messagesBody + `}`, nil, 400, "invalid_request_error"},
		{"pre-flight: no KV memory", engine.Errorf(engine.KindNoMemory, "no room"), nil, "/v1/messages", messagesBody + `}`, nil, 503, "overloaded_error"},
		{"busy, streamed", engine.Errorf(engine.KindBusy, "queue full"), nil, "/v1/messages", messagesBody + `,"stream":true}`, nil, 503, "overloaded_error"},
		{"internal", engine.Errorf(engine.KindInternal, "boom"), nil, "/v1/messages", messagesBody + `}`, nil, 500, "api_error"},
		{"no key", nil, func(c *Config) { c.APIKey = "k" }, "/v1/messages", messagesBody + `}`, nil, 401, "authentication_error"},
		{"wrong x-api-key", nil, func(c *Config) { c.APIKey = "k" }, "/v1/messages", messagesBody + `}`, []string{"x-api-key", "nope"}, 401, "authentication_error"},
		{"body cap", nil, func(c *Config) { c.MaxBodyBytes = 16 }, "/v1/messages", messagesBody + `}`, nil, 413, "request_too_large"},
		{"foreign browser origin", nil, nil, "/v1/messages", messagesBody + `}`, []string{"Origin", "https://evil.example"}, 403, "permission_error"},
		{"count_tokens, unknown model", engine.Errorf(engine.KindNotFound, "no model"), nil, "/v1/messages/count_tokens", messagesBody + `}`, nil, 404, "not_found_error"},
		{"no such Messages path", nil, nil, "/v1/messages/batches", messagesBody + `}`, nil, 404, "not_found_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeService{deltas: stdDeltas(), result: stdResult(), err: tt.err}
			ts := newTestServer(t, f, tt.mod)
			if tt.path == "/v1/messages/count_tokens" {
				ts = newTestServerWith(t, &countingService{fakeService: f}, tt.mod)
			}
			st, out := post(t, ts, tt.path, tt.body, tt.headers...)
			var e AnthropicError
			if err := json.Unmarshal([]byte(out), &e); err != nil || st != tt.status || e.Type != "error" ||
				e.Error.Type != tt.typ || e.Error.Message == "" {
				t.Errorf("%d %s, want %d with an Anthropic %s", st, out, tt.status, tt.typ)
			}
		})
	}
}

// TestMessagesAPIKey: the key is accepted as x-api-key (Anthropic's
// clients) and as a bearer token.
func TestMessagesAPIKey(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, func(c *Config) { c.APIKey = "k" })
	for _, h := range [][]string{{"x-api-key", "k"}, {"Authorization", "Bearer k"}} {
		if st, out := post(t, ts, "/v1/messages", messagesBody+`}`, h...); st != 200 {
			t.Errorf("%s: %d %s", h[0], st, out)
		}
	}
	if st, _ := get(t, ts, "/v1/models", "x-api-key", "k"); st != 200 {
		t.Errorf("x-api-key on /v1/models: %d", st)
	}
}

// TestMessagesStreamErrorAfterStart: a failure once the stream has begun
// is an Anthropic `error` event.
func TestMessagesStreamErrorAfterStart(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), midErr: engine.Errorf(engine.KindPoisoned, "model failed")}
	ts := newTestServer(t, f, nil)
	st, out := post(t, ts, "/v1/messages", messagesBody+`,"stream":true}`)
	evs := namedSSE(t, out)
	last := evs[len(evs)-1]
	var e AnthropicError
	if st != 200 || last[0] != "error" || json.Unmarshal([]byte(last[1]), &e) != nil || e.Error.Type != "overloaded_error" {
		t.Errorf("%d, last event %v", st, last)
	}
}

// TestMessagesStreamAbortCancels: a client that leaves mid-stream frees
// its sequence (the engine's context is cancelled).
func TestMessagesStreamAbortCancels(t *testing.T) {
	f := &fakeService{deltas: stdDeltas()[:1], block: true, canceled: make(chan struct{})}
	ts := newTestServer(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/messages", strings.NewReader(messagesBody+`,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatalf("reading the first event: %v", err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-f.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine's context was not cancelled after the client went away")
	}
}

// TestCountTokens: the engine's count of the translated request.
func TestCountTokens(t *testing.T) {
	cs := &countingService{fakeService: &fakeService{}, n: 42}
	ts := newTestServerWith(t, cs, nil)
	body := `{"model":"m","system":"s","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`
	st, out := post(t, ts, "/v1/messages/count_tokens", body)
	if st != 200 || out != `{"input_tokens":42}` {
		t.Fatalf("%d %s", st, out)
	}
	if string(cs.req.Messages) != `[{"role":"system","content":"s"},{"role":"user","content":"hi"}]` || cs.req.Tools == nil {
		t.Errorf("counted %s with tools %s", cs.req.Messages, cs.req.Tools)
	}
	// An engine that cannot count says so.
	st, out = post(t, newTestServer(t, &fakeService{}, nil), "/v1/messages/count_tokens", body)
	if st != 501 || !strings.Contains(out, `"api_error"`) {
		t.Errorf("without a counter: %d %s", st, out)
	}
}

// newTestServerWith starts an httptest server over any engine.Service.
func newTestServerWith(t *testing.T, svc engine.Service, mod func(*Config)) *httptest.Server {
	t.Helper()
	cfg := Config{Service: svc, Logger: slog.New(slog.DiscardHandler)}
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
