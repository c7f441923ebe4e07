package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// ndjsonRecords splits an NDJSON body into its records, checking framing.
func ndjsonRecords(t *testing.T, body string) []map[string]any {
	t.Helper()
	if !strings.HasSuffix(body, "\n") {
		t.Fatalf("NDJSON body does not end with a newline: %q", body)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestOllamaChatTranslation(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want func(engine.ChatRequest) bool
	}{
		{"options by ollama's names",
			`{"model":"qwen3:0.6b","messages":[{"role":"user","content":"hi"}],"keep_alive":"5m","options":{"num_ctx":2048,"num_predict":7,"temperature":0.2,"top_k":5,"top_p":0.9,"min_p":0.05,"repeat_penalty":1.1,"seed":42,"stop":["\n"],"num_thread":8}}`,
			func(r engine.ChatRequest) bool {
				o := r.Options
				return r.Model == "qwen3:0.6b" && o.NumCtx == 2048 && o.MaxTokens == 7 && o.Sampling.Temperature == 0.2 &&
					o.Sampling.TopK == 5 && o.Sampling.TopP == 0.9 && o.Sampling.MinP == 0.05 && o.Sampling.RepeatPenalty == 1.1 &&
					o.Sampling.Seed == 42 && reflect.DeepEqual(o.Stop, []string{"\n"}) && *o.KeepAlive == 5*time.Minute
			}},
		{"num_predict -1 is no limit", `{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":-1}}`,
			func(r engine.ChatRequest) bool { return r.Options.MaxTokens == 0 }},
		{"format json", `{"model":"m","messages":[{"role":"user","content":"hi"}],"format":"json"}`,
			func(r engine.ChatRequest) bool { return r.Options.JSONMode }},
		{"think false", `{"model":"m","messages":[{"role":"user","content":"hi"}],"think":false}`,
			func(r engine.ChatRequest) bool { return r.TemplateKwargs["enable_thinking"] == false }},
		{"think level", `{"model":"m","messages":[{"role":"user","content":"hi"}],"think":"high"}`,
			func(r engine.ChatRequest) bool {
				return r.TemplateKwargs["enable_thinking"] == true && r.TemplateKwargs["reasoning_effort"] == "high"
			}},
		{"no think leaves the template's default", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			func(r engine.ChatRequest) bool { return r.TemplateKwargs == nil }},
		{"tools pass through", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
			func(r engine.ChatRequest) bool { return strings.Contains(string(r.Tools), `"name":"f"`) }},
		{"history: thinking, tool calls, tool results",
			`{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","thinking":"hmm","tool_calls":[{"function":{"name":"f","arguments":{"a": 1}}}]},{"role":"tool","content":"42","tool_name":"f"}]}`,
			func(r engine.ChatRequest) bool {
				var msgs []map[string]any
				if json.Unmarshal(r.Messages, &msgs) != nil || len(msgs) != 3 {
					return false
				}
				calls, _ := msgs[1]["tool_calls"].([]any)
				call, _ := calls[0].(map[string]any)
				fn, _ := call["function"].(map[string]any)
				return msgs[1]["reasoning_content"] == "hmm" && fn["name"] == "f" && fn["arguments"] == `{"a":1}` &&
					call["type"] == "function" && msgs[2]["name"] == "f" && msgs[2]["role"] == "tool"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{result: stdResult()}
			ts := newTestServer(t, f, nil)
			body := strings.TrimSuffix(tc.body, "}") + `,"stream":false}`
			if status, out := post(t, ts, "/api/chat", body); status != 200 {
				t.Fatalf("status %d: %s", status, out)
			}
			if got := f.lastChat(); !tc.want(got) {
				t.Errorf("engine request %+v (messages %s)", got, got.Messages)
			}
		})
	}
}

func TestOllamaBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, want string
	}{
		{"chat images", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi","images":["aGk="]}]}`, "text only"},
		{"generate images", "/api/generate", `{"model":"m","prompt":"hi","images":["aGk="]}`, "text only"},
		{"format schema", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"format":{"type":"object"}}`, "JSON schema"},
		{"format unknown", "/api/generate", `{"model":"m","prompt":"hi","format":"xml"}`, `format "xml"`},
		{"bad num_predict", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":-5}}`, "num_predict"},
		{"bad temperature", "/api/generate", `{"model":"m","prompt":"hi","options":{"temperature":9}}`, "temperature"},
		{"bad think", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"think":"maximal"}`, "think"},
		{"template override", "/api/generate", `{"model":"m","prompt":"hi","template":"{{ .Prompt }}"}`, "template overrides"},
		{"suffix", "/api/generate", `{"model":"m","prompt":"def f(","suffix":"return x"}`, "fill-in-the-middle"},
		{"context", "/api/generate", `{"model":"m","prompt":"hi","context":[1,2,3]}`, "/api/chat"},
		{"raw with system", "/api/generate", `{"model":"m","prompt":"hi","raw":true,"system":"s"}`, "raw"},
		{"no model", "/api/chat", `{"messages":[{"role":"user","content":"hi"}]}`, `"model"`},
		{"message without role", "/api/chat", `{"model":"m","messages":[{"content":"hi"}]}`, "role"},
		{"tool call arguments", "/api/chat", `{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"arguments":{}}}]}]}`, "function name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, &fakeService{result: stdResult()}, nil)
			status, out := post(t, ts, tc.path, tc.body)
			var e OllamaError
			if status != 400 || json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(e.Error, tc.want) || e.Code != "bad_request" {
				t.Errorf("status %d %s, want 400 in ollama's shape mentioning %q", status, out, tc.want)
			}
		})
	}
}

func TestOllamaChatStream(t *testing.T) {
	f := &fakeService{result: stdResult(), deltas: append(stdDeltas(),
		engine.Delta{ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "get", Arguments: `{"city":"Paris"}`}}})}
	f.result.FinishReason = "tool_calls"
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/api/chat", `{"model":"qwen3:0.6b","messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	recs := ndjsonRecords(t, out)
	if len(recs) != 5 {
		t.Fatalf("%d records, want 4 deltas and a final one: %s", len(recs), out)
	}
	var content, thinking string
	for _, r := range recs[:4] {
		msg := r["message"].(map[string]any)
		if r["done"] != false || msg["role"] != "assistant" || r["model"] != "qwen3:0.6b" || r["created_at"] == nil {
			t.Errorf("record %v", r)
		}
		content += msg["content"].(string)
		if th, ok := msg["thinking"].(string); ok {
			thinking += th
		}
	}
	if content != "Hello" || thinking != "think" {
		t.Errorf("content %q thinking %q", content, thinking)
	}
	call := recs[3]["message"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if call["name"] != "get" || call["arguments"].(map[string]any)["city"] != "Paris" {
		t.Errorf("tool call %v", call)
	}
	last := recs[4]
	want := map[string]any{"done": true, "done_reason": "stop", "prompt_eval_count": 10.0, "eval_count": 3.0,
		"prompt_eval_duration": 60e6, "eval_duration": 30e6, "load_duration": 1e9}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("final %s = %v, want %v", k, last[k], v)
		}
	}
	if _, ok := last["total_duration"]; !ok {
		t.Errorf("final record has no total_duration: %v", last)
	}
}

func TestOllamaNonStreamed(t *testing.T) {
	f := &fakeService{result: stdResult(), deltas: stdDeltas()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`)
	var chat OllamaChatResponse
	if status != 200 || json.Unmarshal([]byte(out), &chat) != nil || chat.Message.Content != "Hello" ||
		chat.Message.Thinking != "think" || !chat.Done || chat.DoneReason != "stop" || chat.EvalCount != 3 {
		t.Errorf("chat: %d %s", status, out)
	}
	status, out = post(t, ts, "/api/generate", `{"model":"m","prompt":"hi","system":"be brief","stream":false}`)
	var gen OllamaGenerateResponse
	if status != 200 || json.Unmarshal([]byte(out), &gen) != nil || gen.Response != "Hello" || gen.Thinking != "think" ||
		!gen.Done || gen.PromptEvalCount != 10 {
		t.Errorf("generate: %d %s", status, out)
	}
	var msgs []map[string]string
	if err := json.Unmarshal(f.lastChat().Messages, &msgs); err != nil || len(msgs) != 2 ||
		msgs[0]["role"] != "system" || msgs[0]["content"] != "be brief" || msgs[1]["content"] != "hi" {
		t.Errorf("generate's messages %s", f.lastChat().Messages)
	}
}

func TestOllamaGenerateRaw(t *testing.T) {
	f := &fakeService{result: stdResult(), deltas: stdDeltas()}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/api/generate", `{"model":"m","prompt":"Once upon","raw":true,"options":{"num_predict":5}}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	recs := ndjsonRecords(t, out)
	var text string
	for _, r := range recs {
		text += r["response"].(string)
	}
	f.mu.Lock()
	req := f.compReq
	f.mu.Unlock()
	if text != "thinkHello" || req.Prompt != "Once upon" || !req.AddSpecial || req.Options.MaxTokens != 5 {
		t.Errorf("raw generate: text %q, engine request %+v", text, req)
	}
	if last := recs[len(recs)-1]; last["done"] != true || last["done_reason"] != "stop" {
		t.Errorf("final record %v", last)
	}
}

func TestOllamaLoadOnly(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, reason string
		unload                   bool
	}{
		{"generate without prompt loads", "/api/generate", `{"model":"m"}`, "load", false},
		{"chat without messages loads", "/api/chat", `{"model":"m","messages":[]}`, "load", false},
		{"keep_alive 0 unloads", "/api/generate", `{"model":"m","keep_alive":0}`, "unload", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{}
			ts := newTestServer(t, f, nil)
			status, out := post(t, ts, tc.path, tc.body)
			var r struct {
				Done       bool   `json:"done"`
				DoneReason string `json:"done_reason"`
			}
			if status != 200 || json.Unmarshal([]byte(out), &r) != nil || !r.Done || r.DoneReason != tc.reason {
				t.Fatalf("%d %s", status, out)
			}
			if tc.unload != (len(f.unloaded) == 1) || (!tc.unload && f.loadReq.Model != "m") {
				t.Errorf("unloaded %v, loaded %+v", f.unloaded, f.loadReq)
			}
		})
	}
}

func TestOllamaStreamErrorRecord(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), midErr: engine.Errorf(engine.KindInternal, "the model broke")}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	recs := ndjsonRecords(t, out)
	if status != 200 || recs[len(recs)-1]["error"] == nil || !strings.Contains(recs[len(recs)-1]["error"].(string), "broke") {
		t.Errorf("%d %s", status, out)
	}
	f = &fakeService{err: engine.Errorf(engine.KindNotFound, "model x not found")}
	ts = newTestServer(t, f, nil)
	status, out = post(t, ts, "/api/generate", `{"model":"x","prompt":"hi"}`)
	if status != 404 || out != `{"error":"model x not found","code":"model_not_found"}` {
		t.Errorf("error before output: %d %s", status, out)
	}
}

func TestOllamaEncoders(t *testing.T) {
	calls := ollamaToolCalls([]engine.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}, {Name: "g", Arguments: "not json"}}, 2)
	b, _ := json.Marshal(calls)
	if string(b) != `[{"id":"c1","function":{"index":2,"name":"f","arguments":{"a":1}}},{"function":{"index":3,"name":"g","arguments":"not json"}}]` {
		t.Errorf("tool calls %s", b)
	}
	for _, tc := range []struct {
		got, want string
	}{
		{doneReason("tool_calls"), "stop"},
		{doneReason("length"), "length"},
		{parameterSize(596_049_920), "596.05M"},
		{parameterSize(8_030_261_248), "8.0B"},
		{parameterSize(260_000), "260.00K"},
		{parameterSize(0), ""},
		{strings.Join(capabilities("{{ messages }}"), ","), "completion"},
		{strings.Join(capabilities("{% if tools %}<think>{% endif %}"), ","), "completion,tools,thinking"},
		{modelFormat("/m/x.GGUF", ""), "gguf"},
		{modelFormat("/m/dir", ""), "safetensors"},
		{modelFormat("", ""), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   PullProgress
		want OllamaPullRecord
	}{
		{PullProgress{Status: "notice", Message: "using Q8_0"}, OllamaPullRecord{Status: "using Q8_0", Event: "notice"}},
		{PullProgress{Status: "start", File: "a.gguf", Total: 9}, OllamaPullRecord{Status: "pulling a.gguf", Digest: "a.gguf", Total: 9, Event: "start", File: "a.gguf"}},
		{PullProgress{Status: "cached", File: "a.gguf", Total: 9}, OllamaPullRecord{Status: "pulling a.gguf", Digest: "a.gguf", Total: 9, Completed: 9, Event: "cached", File: "a.gguf"}},
		{PullProgress{Status: "verify", File: "a.gguf", Completed: 9, Total: 9}, OllamaPullRecord{Status: "verifying sha256 digest", Digest: "a.gguf", Total: 9, Completed: 9, Event: "verify", File: "a.gguf"}},
		{PullProgress{Status: "success"}, OllamaPullRecord{Status: "success"}},
	} {
		if got := pullRecord(tc.in); got != tc.want {
			t.Errorf("pullRecord(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
