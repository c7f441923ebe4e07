package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

func TestChatStreamFraming(t *testing.T) {
	for _, includeUsage := range []bool{false, true} {
		f := &fakeService{deltas: stdDeltas(), result: stdResult()}
		ts := newTestServer(t, f, nil)
		body := chatBody + `,"stream":true}`
		if includeUsage {
			body = chatBody + `,"stream":true,"stream_options":{"include_usage":true}}`
		}
		status, out := post(t, ts, "/v1/chat/completions", body)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, out)
		}
		ev := sseEvents(t, out)
		if ev[len(ev)-1] != "[DONE]" {
			t.Fatalf("last event %q, want [DONE]", ev[len(ev)-1])
		}
		chunks := ev[:len(ev)-1]
		role := decodeChunk(t, chunks[0])
		if role.Choices[0].Delta.Role != "assistant" || role.Object != "chat.completion.chunk" || role.ID == "" {
			t.Errorf("first chunk %s: want the assistant role", chunks[0])
		}
		if got := decodeChunk(t, chunks[1]).Choices[0].Delta; got.ReasoningContent != "think" || got.Content != nil {
			t.Errorf("reasoning chunk %s", chunks[1])
		}
		var text string
		for _, c := range chunks[2:4] {
			text += *decodeChunk(t, c).Choices[0].Delta.Content
		}
		if text != "Hello" {
			t.Errorf("content %q, want Hello", text)
		}
		fin := decodeChunk(t, chunks[4])
		if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
			t.Errorf("finish chunk %s", chunks[4])
		}
		wantChunks := 5
		if includeUsage {
			wantChunks = 6
			u := decodeChunk(t, chunks[5])
			if len(u.Choices) != 0 || u.Usage == nil || u.Usage.PromptTokens != 10 || u.Usage.CompletionTokens != 3 ||
				u.Usage.TotalTokens != 13 || u.Usage.PromptTokensDetails.CachedTokens != 4 {
				t.Errorf("usage chunk %s", chunks[5])
			}
		}
		if len(chunks) != wantChunks {
			t.Errorf("include_usage=%v: %d chunks, want %d: %v", includeUsage, len(chunks), wantChunks, chunks)
		}
		for _, c := range chunks[:5] {
			if strings.Contains(c, `"usage"`) {
				t.Errorf("chunk carries usage: %s", c)
			}
		}
	}
}

func TestChatNonStreaming(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/chat/completions", chatBody+`}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var cc ChatCompletion
	if err := json.Unmarshal([]byte(out), &cc); err != nil {
		t.Fatal(err)
	}
	ch := cc.Choices[0]
	if cc.Object != "chat.completion" || ch.Message.Role != "assistant" || ch.Message.Content != "Hello" ||
		ch.Message.ReasoningContent != "think" || ch.FinishReason != "stop" {
		t.Errorf("response %s", out)
	}
	if cc.Usage.PromptTokens != 10 || cc.Usage.CompletionTokens != 3 || cc.Usage.TotalTokens != 13 ||
		cc.Usage.PromptTokensDetails == nil || cc.Usage.PromptTokensDetails.CachedTokens != 4 {
		t.Errorf("usage %+v", cc.Usage)
	}
	if cc.Timings == nil || cc.Timings.PredictedPerSecond != 100 || cc.Timings.PromptPerSecond != 100 {
		t.Errorf("timings %+v, want 100 tok/s both", cc.Timings)
	}
}

func TestChatParameters(t *testing.T) {
	f := &fakeService{result: stdResult()}
	ts := newTestServer(t, f, nil)
	body := chatBody + `,"temperature":0.5,"top_p":0.9,"max_completion_tokens":7,"stop":"END","seed":42,
		"presence_penalty":0.1,"frequency_penalty":0.2,"logprobs":true,"top_logprobs":3,"n":1,
		"response_format":{"type":"json_object"},"tools":[{"type":"function","function":{"name":"f"}}],
		"top_k":40,"min_p":0.05,"repeat_penalty":1.1,"keep_alive":"10m","logit_bias":{"5":-100},
		"chat_template_kwargs":{"enable_thinking":false},"user":"u","metadata":{"a":"b"}}`
	if status, out := post(t, ts, "/v1/chat/completions", body); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	got := f.lastChat()
	o := got.Options
	s := o.Sampling
	if s.Temperature != 0.5 || s.TopP != 0.9 || s.TopK != 40 || s.MinP != 0.05 || s.RepeatPenalty != 1.1 ||
		s.PresencePenalty != 0.1 || s.FrequencyPenalty != 0.2 || s.Seed != 42 || s.LogitBias[5] != -100 {
		t.Errorf("sampling %+v", s)
	}
	if o.MaxTokens != 7 || len(o.Stop) != 1 || o.Stop[0] != "END" || !o.Logprobs || o.TopLogprobs != 3 ||
		!o.JSONMode || o.KeepAlive == nil || *o.KeepAlive != 10*time.Minute {
		t.Errorf("options %+v", o)
	}
	if got.TemplateKwargs["enable_thinking"] != false || !strings.Contains(string(got.Tools), `"name":"f"`) {
		t.Errorf("template inputs %+v %s", got.TemplateKwargs, got.Tools)
	}
	// stop as a list, keep_alive as seconds
	if status, out := post(t, ts, "/v1/chat/completions", chatBody+`,"stop":["a","b"],"keep_alive":-1}`); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	if o := f.lastChat().Options; len(o.Stop) != 2 || *o.KeepAlive != -time.Second {
		t.Errorf("stop list / keep_alive seconds: %+v", o)
	}
}

func TestChatBadRequests(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"n=2", chatBody + `,"n":2}`, "n = 2 is not supported"},
		{"json_schema", chatBody + `,"response_format":{"type":"json_schema","json_schema":{}}}`, "json_schema is not supported"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, `\"model\" is required`},
		{"no messages", `{"model":"m"}`, `\"messages\" is required`},
		{"empty messages", `{"model":"m","messages":[]}`, "messages is empty"},
		{"temperature range", chatBody + `,"temperature":3}`, "temperature = 3 is out of range"},
		{"top_logprobs alone", chatBody + `,"top_logprobs":2}`, "top_logprobs requires"},
		{"wrong type", chatBody + `,"max_tokens":"ten"}`, `field \"max_tokens\"`},
		{"bad json", `{"model":`, "not valid JSON"},
		{"empty", ``, "request body is empty"},
		{"stop type", chatBody + `,"stop":5}`, "stop must be a string"},
		{"negative num_ctx", chatBody + `,"num_ctx":-1}`, "num_ctx = -1: must be a positive number of tokens"},
	}
	f := &fakeService{result: stdResult()}
	ts := newTestServer(t, f, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out := post(t, ts, "/v1/chat/completions", c.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, out)
			}
			var er ErrorResponse
			if err := json.Unmarshal([]byte(out), &er); err != nil {
				t.Fatalf("error body %q: %v", out, err)
			}
			if er.Error.Type != "invalid_request_error" || er.Error.Code != "bad_request" || !strings.Contains(out, c.want) {
				t.Errorf("error %s, want it to contain %q", out, c.want)
			}
		})
	}
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		kind   engine.Kind
		status int
		code   string
	}{
		{engine.KindBadRequest, 400, "bad_request"},
		{engine.KindContextLength, 400, "context_length_exceeded"},
		{engine.KindNotFound, 404, "model_not_found"},
		{engine.KindUnauthorized, 401, "unauthorized"},
		{engine.KindBusy, 503, "busy"},
		{engine.KindNoMemory, 503, "insufficient_memory"},
		{engine.KindPoisoned, 503, "poisoned"},
		{engine.KindInternal, 500, "internal"},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			f := &fakeService{err: engine.Errorf(c.kind, "boom %s", c.kind)}
			ts := newTestServer(t, f, nil)
			body := chatBody + `}`
			if stream {
				body = chatBody + `,"stream":true}`
			}
			status, out := post(t, ts, "/v1/chat/completions", body)
			var er ErrorResponse
			if err := json.Unmarshal([]byte(out), &er); err != nil {
				t.Fatalf("%s: body %q: %v", c.kind, out, err)
			}
			if status != c.status || er.Error.Code != c.code || er.Error.Message != "boom "+string(c.kind) || er.Error.Type == "" {
				t.Errorf("%s stream=%v: %d %s, want %d code %s", c.kind, stream, status, out, c.status, c.code)
			}
		}
	}
	// A plain error is a 500.
	f := &fakeService{err: errors.New("disk on fire")}
	if status, out := post(t, newTestServer(t, f, nil), "/v1/chat/completions", chatBody+`}`); status != 500 || !strings.Contains(out, "disk on fire") {
		t.Errorf("plain error: %d %s", status, out)
	}
}

func TestStreamErrorAfterOutput(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), midErr: engine.Errorf(engine.KindPoisoned, "device lost; unload and load again")}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/chat/completions", chatBody+`,"stream":true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	ev := sseEvents(t, out)
	last := ev[len(ev)-1]
	if !strings.Contains(last, `"error"`) || !strings.Contains(last, "poisoned") || strings.Contains(out, "[DONE]") {
		t.Errorf("want a final error event and no [DONE]: %v", ev)
	}
}

func TestAuth(t *testing.T) {
	f := &fakeService{result: stdResult()}
	ts := newTestServer(t, f, func(c *Config) { c.APIKey = "s3cret" })
	cases := []struct {
		name, path, header string
		want               int
	}{
		{"health is open", "/health", "", 200},
		{"no key", "/api/ps", "", 401},
		{"wrong key", "/api/ps", "Bearer nope", 401},
		{"not bearer", "/api/ps", "s3cret", 401},
		{"right key", "/api/ps", "Bearer s3cret", 200},
		{"metrics need key", "/metrics", "", 401},
	}
	for _, c := range cases {
		var hdr []string
		if c.header != "" {
			hdr = []string{"Authorization", c.header}
		}
		status, out := get(t, ts, c.path, hdr...)
		if status != c.want {
			t.Errorf("%s: status %d, want %d: %s", c.name, status, c.want, out)
		}
		want := `"authentication_error"` // OpenAI's shape; ollama's on /api/ routes
		if strings.HasPrefix(c.path, "/api/") {
			want = `"error":"missing or wrong API key`
		}
		if status == 401 && !strings.Contains(out, want) {
			t.Errorf("%s: body %s", c.name, out)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	f := &fakeService{result: stdResult()}
	ts := newTestServer(t, f, func(c *Config) { c.MaxBodyBytes = 64 })
	big := chatBody + `,"user":"` + strings.Repeat("x", 200) + `"}`
	status, out := post(t, ts, "/v1/chat/completions", big)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(out, "request_too_large") {
		t.Errorf("with Content-Length: %d %s", status, out)
	}
	// Without a Content-Length (chunked), the limit applies while reading.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/chat/completions", struct{ *strings.Reader }{strings.NewReader(big)})
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked: status %d, want 413", resp.StatusCode)
	}
}

func TestClientDisconnectCancels(t *testing.T) {
	f := &fakeService{deltas: stdDeltas()[:1], block: true, canceled: make(chan struct{})}
	ts := newTestServer(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/chat/completions", strings.NewReader(chatBody+`,"stream":true}`))
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

type fakeEngine struct{}

func (fakeEngine) Metrics() engine.MetricsSnapshot {
	return engine.MetricsSnapshot{
		Requests: map[string]int64{"stop": 2, "busy": 1}, PromptTokens: 20, CachedTokens: 8, GeneratedTokens: 6,
		PrefillTokensPerSec: 250, DecodeTokensPerSec: 50, QueueDepth: 1, RunningSeqs: 2,
		Models: []engine.ModelMetrics{{Name: "m", State: "ready", Running: 2, Queued: 1, KVBlocksUsed: 5, KVBlocksFree: 11}},
	}
}

func TestMetrics(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult(),
		models: []engine.ModelStatus{{Name: "m", State: engine.StateReady, Active: 2, SizeBytes: 1000}}}
	ts := newTestServer(t, f, func(c *Config) { c.Engine = fakeEngine{} })
	post(t, ts, "/v1/chat/completions", chatBody+`}`)
	post(t, ts, "/v1/chat/completions", chatBody+`,"n":3}`)
	status, out := get(t, ts, "/metrics")
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	for _, want := range []string{
		`helexa_http_requests_total{route="/v1/chat/completions",status="200"} 1`,
		`helexa_http_requests_total{route="/v1/chat/completions",status="400"} 1`,
		`helexa_model_prompt_tokens_total{model="m"} 10`,
		`helexa_model_cached_tokens_total{model="m"} 4`,
		`helexa_model_generated_tokens_total{model="m"} 3`,
		`helexa_model_decode_tokens_per_second{model="m"} 100`,
		`helexa_model_state{model="m",state="ready"} 1`,
		`helexa_model_state{model="m",state="poisoned"} 0`,
		`helexa_model_active_requests{model="m"} 2`,
		`helexa_engine_requests_total{status="busy"} 1`,
		`helexa_prompt_tokens_total 20`,
		`helexa_prefix_cache_hit_tokens_total 8`,
		`helexa_decode_tokens_per_second 50`,
		`helexa_queue_depth{model="m"} 1`,
		`helexa_running_sequences{model="m"} 2`,
		`helexa_kv_blocks_used{model="m"} 5`,
		`helexa_kv_blocks_free{model="m"} 11`,
		"# TYPE helexa_generated_tokens_total counter",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestModelsAndNative(t *testing.T) {
	exp := time.Unix(1700000300, 0).UTC()
	f := &fakeService{models: []engine.ModelStatus{{Name: "org/repo:Q8_0", State: engine.StatePoisoned, Error: "cuda", ExpiresAt: exp}}}
	ts := newTestServer(t, f, nil)
	status, out := get(t, ts, "/v1/models")
	if status != 200 || !strings.Contains(out, `"id":"org/repo:Q8_0"`) || !strings.Contains(out, `"state":"poisoned"`) || !strings.Contains(out, `"object":"list"`) {
		t.Errorf("/v1/models: %d %s", status, out)
	}
	if status, out := get(t, ts, "/v1/models/org/repo:Q8_0"); status != 200 || !strings.Contains(out, `"state":"poisoned"`) {
		t.Errorf("/v1/models/id: %d %s", status, out)
	}
	if status, out := get(t, ts, "/v1/models/other"); status != 404 || !strings.Contains(out, "neither loaded nor in the local cache") {
		t.Errorf("/v1/models/other: %d %s", status, out)
	}
	if status, out := get(t, ts, "/api/ps"); status != 200 || !strings.Contains(out, `"models":[{"name":"org/repo:Q8_0"`) {
		t.Errorf("/api/ps: %d %s", status, out)
	}
	if status, out := post(t, ts, "/api/load", `{"model":"x","keep_alive":"1m","num_ctx":512}`); status != 200 || !strings.Contains(out, `"context":512`) {
		t.Errorf("/api/load: %d %s", status, out)
	}
	if f.loadReq.KeepAlive == nil || *f.loadReq.KeepAlive != time.Minute {
		t.Errorf("load keep_alive %v", f.loadReq.KeepAlive)
	}
	if status, out := post(t, ts, "/api/load", `{"model":"x","gpu":1}`); status != 400 || !strings.Contains(out, "gpu") {
		t.Errorf("/api/load unknown field: %d %s", status, out)
	}
	if status, out := post(t, ts, "/api/load", `{"model":"x","num_ctx":-5}`); status != 400 || !strings.Contains(out, "num_ctx = -5") {
		t.Errorf("/api/load negative num_ctx: %d %s", status, out)
	}
	if status, out := post(t, ts, "/api/unload", `{"model":"x"}`); status != 200 || len(f.unloaded) != 1 {
		t.Errorf("/api/unload: %d %s", status, out)
	}
	if status, out := post(t, ts, "/api/pull", `{"model":"x"}`); status != 501 {
		t.Errorf("/api/pull without puller: %d %s", status, out)
	}
	if status, _ := get(t, ts, "/nope"); status != 404 {
		t.Errorf("unknown route: %d", status)
	}
	if status, _ := get(t, ts, "/v1/chat/completions"); status != 405 {
		t.Errorf("wrong method: %d", status)
	}
}

func TestCompletions(t *testing.T) {
	f := &fakeService{deltas: stdDeltas()[1:], result: stdResult()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/completions", `{"model":"m","prompt":"Once","max_tokens":5,"logprobs":2}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	var c Completion
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "text_completion" || c.Choices[0].Text != "Hello" || *c.Choices[0].FinishReason != "stop" || c.Usage.TotalTokens != 13 {
		t.Errorf("completion %s", out)
	}
	if lp := c.Choices[0].Logprobs; lp == nil || len(lp.Tokens) != 2 || lp.TextOffset[1] != 3 {
		t.Errorf("logprobs %+v", c.Choices[0].Logprobs)
	}
	if f.compReq.Prompt != "Once" || !f.compReq.AddSpecial || f.compReq.Options.TopLogprobs != 2 {
		t.Errorf("runner request %+v", f.compReq)
	}
	status, out = post(t, ts, "/v1/completions", `{"model":"m","prompt":"Once","stream":true}`)
	ev := sseEvents(t, out)
	if status != 200 || ev[len(ev)-1] != "[DONE]" || !strings.Contains(ev[0], `"text":"Hel"`) {
		t.Errorf("stream %d %v", status, ev)
	}
}
