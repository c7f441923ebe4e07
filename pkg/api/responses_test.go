package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

const responsesBody = `{"model":"m","input":"hi"`

func decodeResponse(t *testing.T, body string) Response {
	t.Helper()
	var r Response
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("response %q: %v", body, err)
	}
	return r
}

// doReq sends a request with any method and returns the status and body.
func doReq(t *testing.T, ts *httptest.Server, method, path, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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

// namedEvents splits a Responses SSE body into (event, data) pairs,
// checking that each event line names the data's type.
func namedEvents(t *testing.T, body string) ([]string, []map[string]any) {
	t.Helper()
	var names []string
	var data []map[string]any
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		name, rest, ok := strings.Cut(ev, "\n")
		name, ok1 := strings.CutPrefix(name, "event: ")
		payload, ok2 := strings.CutPrefix(rest, "data: ")
		var m map[string]any
		if !ok || !ok1 || !ok2 || json.Unmarshal([]byte(payload), &m) != nil || m["type"] != name {
			t.Fatalf("malformed event %q", ev)
		}
		names, data = append(names, name), append(data, m)
	}
	return names, data
}

func TestResponsesNonStreaming(t *testing.T) {
	call := engine.ToolCall{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	f := &fakeService{deltas: append(stdDeltas(), engine.Delta{ToolCalls: []engine.ToolCall{call}}), result: stdResult()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/responses", `{"model":"m","input":"hi","instructions":"be brief","tools":[{"type":"function","name":"get_weather"}],"metadata":{"k":"v"}}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	r := decodeResponse(t, out)
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Status != "completed" || r.CreatedAt != 1700000000 || r.Metadata["k"] != "v" {
		t.Errorf("response %s", out)
	}
	if got := outputSummary(r.Output); got != `reasoning:think message:Hello function_call:get_weather{"city":"Paris"}` || r.Output[2].CallID != "call_9" {
		t.Errorf("output %q: %s", got, out)
	}
	u := r.Usage
	if u == nil || u.InputTokens != 10 || u.InputTokensDetails.CachedTokens != 4 || u.OutputTokens != 3 || u.TotalTokens != 13 || u.OutputTokensDetails.ReasoningTokens != 1 {
		t.Errorf("usage %+v", u)
	}
	req := f.lastChat()
	wantJSON(t, req.Messages, `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`)
	wantJSON(t, req.Tools, `[{"type":"function","function":{"name":"get_weather"}}]`)
	if f.reqID != r.ID {
		t.Errorf("engine request id %q, want %q", f.reqID, r.ID)
	}
}

func TestResponsesStreamFraming(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/responses", responsesBody+`,"stream":true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	names, data := namedEvents(t, out)
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.reasoning_text.delta " +
		"response.reasoning_text.done response.content_part.done response.output_item.done response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events\n %s\nwant\n %s", got, want)
	}
	final := data[len(data)-1]["response"].(map[string]any)
	usage := final["usage"].(map[string]any)
	if final["status"] != "completed" || usage["input_tokens"] != float64(10) || strings.Contains(out, "[DONE]") {
		t.Errorf("final event %v", final)
	}
	// The streamed response is kept like a non-streamed one.
	if status, got := get(t, ts, "/v1/responses/"+final["id"].(string)); status != 200 || decodeResponse(t, got).Status != "completed" {
		t.Errorf("GET the streamed response: %d %s", status, got)
	}
}

// TestResponsesStoreAndContinue: a kept response can be fetched, deleted
// and continued from (its conversation, not its instructions, comes
// first); store: false keeps nothing.
func TestResponsesStoreAndContinue(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	_, out := post(t, ts, "/v1/responses", `{"model":"m","input":"hi","instructions":"old rules"}`)
	first := decodeResponse(t, out)
	if status, got := get(t, ts, "/v1/responses/"+first.ID); status != 200 || got != strings.TrimSpace(out) {
		t.Errorf("GET: %d %s\nwant %s", status, got, out)
	}
	status, out := post(t, ts, "/v1/responses", `{"model":"m","input":[{"role":"user","content":"more"}],"instructions":"new rules","previous_response_id":"`+first.ID+`"}`)
	if status != 200 || *decodeResponse(t, out).PreviousResponseID != first.ID {
		t.Fatalf("continue: %d %s", status, out)
	}
	wantJSON(t, f.lastChat().Messages, `[{"role":"system","content":"new rules"},{"role":"user","content":"hi"},`+
		`{"role":"assistant","content":"Hello","reasoning_content":"think"},{"role":"user","content":"more"}]`)

	if status, out := doReq(t, ts, http.MethodDelete, "/v1/responses/"+first.ID, ""); status != 200 || !strings.Contains(out, `"deleted":true`) {
		t.Errorf("DELETE: %d %s", status, out)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if status, out := doReq(t, ts, method, "/v1/responses/"+first.ID, ""); status != 404 || !strings.Contains(out, `"not_found_error"`) {
			t.Errorf("%s after DELETE: %d %s", method, status, out)
		}
	}
	if status, out := post(t, ts, "/v1/responses", responsesBody+`,"previous_response_id":"`+first.ID+`"}`); status != 400 || !strings.Contains(out, "previous_response_id") {
		t.Errorf("continuing a deleted response: %d %s", status, out)
	}

	_, out = post(t, ts, "/v1/responses", responsesBody+`,"store":false}`)
	unkept := decodeResponse(t, out)
	if unkept.Store {
		t.Errorf("store: false echoed as %v", unkept.Store)
	}
	if status, _ := get(t, ts, "/v1/responses/"+unkept.ID); status != 404 {
		t.Errorf("GET a store:false response: %d, want 404", status)
	}
	if status, out := post(t, ts, "/v1/responses", responsesBody+`,"previous_response_id":"`+unkept.ID+`"}`); status != 400 || !strings.Contains(out, "store: false") {
		t.Errorf("continuing a store:false response: %d %s", status, out)
	}
}

func TestResponsesErrors(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		svc                      *fakeService
		status                   int
		want                     string
	}{
		{"image part", "POST", "/v1/responses", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`,
			&fakeService{}, 400, "read text only"},
		{"json_schema", "POST", "/v1/responses", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{}}}}`,
			&fakeService{}, 400, "json_schema"},
		{"malformed field", "POST", "/v1/responses", `{"model":"m","input":"x","max_output_tokens":"ten"}`, &fakeService{}, 400, "max_output_tokens"},
		{"unknown model", "POST", "/v1/responses", responsesBody + `}`, &fakeService{err: engine.Errorf(engine.KindNotFound, "no model m")}, 404, "not_found_error"},
		{"prompt too long, streamed", "POST", "/v1/responses", responsesBody + `,"stream":true}`,
			&fakeService{err: engine.Errorf(engine.KindContextLength, "prompt too long")}, 400, "context_length_exceeded"},
		{"GET stream", "GET", "/v1/responses/resp_1?stream=true", "", &fakeService{}, 400, "stream"},
		{"GET unknown", "GET", "/v1/responses/resp_nope", "", &fakeService{}, 404, "resp_nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := doReq(t, newTestServer(t, tt.svc, nil), tt.method, tt.path, tt.body)
			var e ErrorResponse
			if status != tt.status || json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(out, tt.want) || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("%d %s, want %d mentioning %q in an OpenAI-shaped error", status, out, tt.status, tt.want)
			}
		})
	}
}

// TestResponsesStreamErrorAfterOutput: a failure after the first event
// ends the stream with response.failed, and the response is not kept.
func TestResponsesStreamErrorAfterOutput(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), midErr: engine.Errorf(engine.KindPoisoned, "device lost")}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/responses", responsesBody+`,"stream":true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	names, data := namedEvents(t, out)
	last := data[len(data)-1]["response"].(map[string]any)
	if names[len(names)-1] != evFailed || last["status"] != "failed" || !strings.Contains(out, "device lost") {
		t.Fatalf("want response.failed last: %v", names)
	}
	if status, _ := get(t, ts, "/v1/responses/"+last["id"].(string)); status != 404 {
		t.Errorf("a failed response was kept (GET %d)", status)
	}
}

// TestResponsesGuardAuthBodyCap: the API key, the browser guard, the body
// cap and CORS preflights apply to the Responses routes as to the others.
func TestResponsesGuardAuthBodyCap(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, func(c *Config) {
		c.APIKey = "s3cret"
		c.MaxBodyBytes = 256
		c.Guard = Guard{BindHost: "127.0.0.1", Origins: []string{"https://app.example.com"}}
	})
	key := []string{"Authorization", "Bearer s3cret"}
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		want                     string
	}{
		{"POST without key", "POST", "/v1/responses", responsesBody + `}`, nil, 401, "authentication_error"},
		{"GET without key", "GET", "/v1/responses/resp_1", "", nil, 401, "authentication_error"},
		{"DELETE without key", "DELETE", "/v1/responses/resp_1", "", nil, 401, "authentication_error"},
		{"POST with key", "POST", "/v1/responses", responsesBody + `}`, key, 200, `"completed"`},
		{"body over the cap", "POST", "/v1/responses", `{"model":"m","input":"` + strings.Repeat("x", 400) + `"}`, key, 413, "request_too_large"},
		{"foreign origin", "POST", "/v1/responses", responsesBody + `}`, append([]string{"Origin", "https://evil.example"}, key...), 403, "HELEXA_ORIGINS"},
		{"foreign origin DELETE", "DELETE", "/v1/responses/resp_1", "", append([]string{"Origin", "https://evil.example"}, key...), 403, "HELEXA_ORIGINS"},
		{"text/plain", "POST", "/v1/responses", responsesBody + `}`, append([]string{"Content-Type", "text/plain"}, key...), 415, "application/json"},
		{"allowed origin", "POST", "/v1/responses", responsesBody + `}`, append([]string{"Origin", "https://app.example.com"}, key...), 200, `"completed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := doReq(t, ts, tt.method, tt.path, tt.body, tt.headers...)
			if status != tt.status || !strings.Contains(out, tt.want) {
				t.Errorf("%d %s, want %d mentioning %q", status, out, tt.status, tt.want)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/v1/responses/resp_1", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "DELETE")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "DELETE") {
		t.Errorf("preflight: %d, Access-Control-Allow-Methods %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Methods"))
	}
}

// TestResponsesClientDisconnectCancels: a client that drops a stream
// cancels its generation (the engine frees the sequence).
func TestResponsesClientDisconnectCancels(t *testing.T) {
	f := &fakeService{deltas: stdDeltas()[:1], block: true, canceled: make(chan struct{})}
	ts := newTestServer(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/responses", strings.NewReader(responsesBody+`,"stream":true}`))
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
