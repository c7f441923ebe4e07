package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
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
	f := &fakeService{err: engine.Errorf(engine.KindBusy, "queue full")}
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

// TestCompletionPromptForms: prompt as a string, a list of strings (one
// choice each, indexed), token ids, or a list of token-id lists.
func TestCompletionPromptForms(t *testing.T) {
	for _, tc := range []struct {
		name, prompt string
		choices      int
		tokens       []int32
		status       int
	}{
		{"string", `"Once"`, 1, nil, 200},
		{"list of strings", `["Once","Twice"]`, 2, nil, 200},
		{"token ids", `[1,15,7]`, 1, []int32{1, 15, 7}, 200},
		{"lists of token ids", `[[1,2],[3]]`, 2, []int32{3}, 200},
		{"number", `5`, 0, nil, 400},
		{"empty list", `[]`, 0, nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{deltas: stdDeltas(), result: stdResult()}
			ts := newTestServer(t, f, nil)
			st, out := post(t, ts, "/v1/completions", `{"model":"m","prompt":`+tc.prompt+`}`)
			if st != tc.status {
				t.Fatalf("status %d %s, want %d", st, out, tc.status)
			}
			if st != 200 {
				return
			}
			var c Completion
			if err := json.Unmarshal([]byte(out), &c); err != nil || len(c.Choices) != tc.choices {
				t.Fatalf("%d choices in %s, want %d", len(c.Choices), out, tc.choices)
			}
			for i, ch := range c.Choices {
				if ch.Index != i || ch.Text == "" {
					t.Errorf("choice %d: %+v", i, ch)
				}
			}
			if got := f.compReq.Tokens; tc.tokens != nil && !slices.Equal(got, tc.tokens) {
				t.Errorf("last prompt's tokens %v, want %v", got, tc.tokens)
			}
		})
	}
}

// TestPromptErrorsNameTheField: malformed prompts and embedding inputs are
// reported under the field the client sent.
func TestPromptErrorsNameTheField(t *testing.T) {
	tests := []struct {
		path, body, want string
	}{
		{"/v1/completions", `{"model":"m","prompt":[]}`, "prompt is an empty list"},
		{"/v1/completions", `{"model":"m","prompt":{"a":1}}`, "prompt must be"},
		{"/v1/embeddings", `{"model":"m","input":[]}`, "input is an empty list"},
		{"/v1/embeddings", `{"model":"m","input":[[1],[]]}`, "input[1] is an empty list"},
		{"/v1/embeddings", `{"model":"m","input":true}`, "input must be"},
	}
	for _, tt := range tests {
		ts := newTestServer(t, &fakeService{}, nil)
		status, out := post(t, ts, tt.path, tt.body)
		if status != 400 || !strings.Contains(out, tt.want) {
			t.Errorf("%s %s: %d %s, want 400 saying %q", tt.path, tt.body, status, out, tt.want)
		}
	}
}
