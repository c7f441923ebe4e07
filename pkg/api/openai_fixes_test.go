package api

import (
	"encoding/json"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestNullContentIsEmpty: an assistant turn with "content": null (what
// openai-node and agents send after a tool call) reaches the template as
// "", every other key in its place.
func TestNullContentIsEmpty(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, nil)
	body := `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`
	if st, out := post(t, ts, "/v1/chat/completions", body); st != 200 {
		t.Fatalf("null content: %d %s", st, out)
	}
	want := `[{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"sunny"}]`
	if got := string(f.lastChat().Messages); got != want {
		t.Errorf("messages handed to the template:\n%s\nwant\n%s", got, want)
	}
}

// TestNotFoundCodes: a model that does not exist is OpenAI's 404
// model_not_found; a path no route serves is a plain not_found.
func TestNotFoundCodes(t *testing.T) {
	f := &fakeService{err: engine.Errorf(engine.KindNotFound, "unknown model name \"gpt-4o-mini\"")}
	ts := newTestServer(t, f, nil)
	cases := []struct {
		path, code string
	}{
		{"/v1/chat/completions", "model_not_found"},
		{"/v1/nothing-here", "not_found"},
	}
	for _, c := range cases {
		st, out := post(t, ts, c.path, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
		var e ErrorResponse
		if err := json.Unmarshal([]byte(out), &e); err != nil || st != 404 || e.Error.Code != c.code {
			t.Errorf("%s: %d %s, want 404 with code %q", c.path, st, out, c.code)
		}
	}
	if k := kindOf(404, "model_not_found"); k != engine.KindNotFound {
		t.Errorf("the client reads model_not_found as %q", k)
	}
}
