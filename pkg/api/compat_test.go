package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/runner"
)

// TestContentParts: content as an array of parts is flattened to text in
// order (other keys keep their place); image parts are a clear 400.
func TestContentParts(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	body := `{"model":"m","messages":[{"role":"system","content":"be brief"},` +
		`{"role":"user","content":[{"type":"text","text":"Hello"},{"type":"text","text":"world"}],"name":"ann"}]}`
	if st, out := post(t, ts, "/v1/chat/completions", body); st != 200 {
		t.Fatalf("content parts: %d %s", st, out)
	}
	want := `[{"role":"system","content":"be brief"},{"role":"user","content":"Hello\nworld","name":"ann"}]`
	if got := string(f.lastChat().Messages); got != want {
		t.Errorf("messages handed to the template:\n%s\nwant\n%s", got, want)
	}
	img := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`
	if st, out := post(t, ts, "/v1/chat/completions", img); st != 400 || !strings.Contains(out, "no vision") {
		t.Errorf("image part: %d %s, want a 400 naming the lack of vision", st, out)
	}
}

// TestUnknownOpenAIFieldsIgnored: fields clients send that helexa does not
// use are ignored, as OpenAI and llama-server do; malformed values of
// fields it uses are still refused.
func TestUnknownOpenAIFieldsIgnored(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	extra := `,"store":false,"reasoning_effort":"low","service_tier":"auto","metadata":{"k":"v"},"user":"u1","parallel_tool_calls":false,"prediction":null,"modalities":["text"]}`
	if st, out := post(t, ts, "/v1/chat/completions", chatBody+extra); st != 200 {
		t.Errorf("chat with extra fields: %d %s", st, out)
	}
	if st, out := post(t, ts, "/v1/completions", `{"model":"m","prompt":"p","user":"u","suffix":null,"best_of":1}`); st != 200 {
		t.Errorf("completion with extra fields: %d %s", st, out)
	}
	if st, out := post(t, ts, "/v1/chat/completions", chatBody+`,"max_tokens":"ten"}`); st != 400 {
		t.Errorf("a malformed used field: %d %s", st, out)
	}
}

// TestRetryAfterOnBusy: a 503 tells clients when to retry.
func TestRetryAfterOnBusy(t *testing.T) {
	f := &fakeService{err: runner.Errorf(runner.KindBusy, "queue full")}
	s := newTestServer(t, f, nil)
	req := httptest.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody+"}"))
	req.RequestURI = ""
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("busy: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
