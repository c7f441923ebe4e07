package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

const twoTools = `[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"get_time"}}]`

// chatOut is what a chat request streamed.
type chatOut struct {
	content, reasoning string
	calls              []ToolCall
	tokens             int
	res                Result
	err                error
}

// scriptedChat runs a chat turn on a fake model that generates text.
func scriptedChat(t *testing.T, text string, req ChatRequest) chatOut {
	t.Helper()
	tok := newFakeTok()
	gen, err := tok.Encode(text, false, false)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := fakeTemplate{}.Render(context.Background(), ChatInput{Messages: req.Messages, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := tok.Encode(prompt, false, true)
	l := &fakeLoader{setup: func(f *fakeExec) { f.logits = script(len(ids), gen, tok.VocabSize()) }}
	m := newTestManager(t, l, nil)
	var o chatOut
	o.res, o.err = m.Chat(context.Background(), req, func(d Delta) error {
		o.content += d.Content
		o.reasoning += d.Reasoning
		o.calls = append(o.calls, d.ToolCalls...)
		o.tokens += len(d.Tokens)
		return nil
	})
	return o
}

// TestChatToolCalls: the engine parses the model's tool calls into
// structured deltas (markup out of the content, an id for every call,
// finish reason tool_calls), and every generated token still reaches the
// caller.
func TestChatToolCalls(t *testing.T) {
	msgs := json.RawMessage(`[{"role":"user","content":"hi"}]`)
	cases := []struct {
		name, text, content, reason string
		tools, reasoning            string
		opts                        Options
		choice                      ToolChoice
		calls                       []ToolCall // ids "" are checked as call_…
	}{
		{name: "call", text: "<think>abc</think>hello[f {}]", tools: twoTools, reasoning: "abc", content: "hello", reason: "tool_calls",
			calls: []ToolCall{{Name: "f", Arguments: "{}"}}},
		{name: "the model's id is kept", text: "[f#c7 {}][g {}]", tools: twoTools, reason: "tool_calls",
			calls: []ToolCall{{ID: "c7", Name: "f", Arguments: "{}"}, {Name: "g", Arguments: "{}"}}},
		{name: "no tools: markup stays content", text: "hello[f {}]", content: "hello[f {}]", reason: "stop"},
		{name: "an empty tools list is no tools", text: "hello[f {}]", tools: `[]`, content: "hello[f {}]", reason: "stop"},
		{name: "stop string after a call", text: "[f {}]STOPabc", tools: twoTools, opts: Options{Stop: []string{"STOP"}}, reason: "tool_calls",
			calls: []ToolCall{{Name: "f", Arguments: "{}"}}},
		{name: "cut off inside a call", text: "ab[f {", tools: twoTools, opts: Options{MaxTokens: 6}, content: "ab[f {", reason: "length"},
		{name: "required call", text: `{"city":"Oslo"}`, tools: twoTools, choice: ToolChoice{Name: "get_weather"}, reason: "tool_calls",
			calls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := ChatRequest{Model: "toy", Messages: msgs, Options: c.opts, ToolChoice: c.choice}
			if c.tools != "" {
				req.Tools = json.RawMessage(c.tools)
			}
			o := scriptedChat(t, c.text, req)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.content != c.content || o.reasoning != c.reasoning || o.res.FinishReason != c.reason || len(o.calls) != len(c.calls) {
				t.Fatalf("reasoning %q content %q calls %+v finish %q; want %q %q, %d calls, %q",
					o.reasoning, o.content, o.calls, o.res.FinishReason, c.reasoning, c.content, len(c.calls), c.reason)
			}
			for i, want := range c.calls {
				got := o.calls[i]
				if want.ID == "" && strings.HasPrefix(got.ID, "call_") {
					want.ID = got.ID
				}
				if got != want {
					t.Errorf("call %d = %+v, want %+v", i, got, want)
				}
			}
			if o.tokens != o.res.Usage.CompletionTokens && !strings.Contains(c.name, "stop") {
				t.Errorf("%d tokens reached the caller, %d were generated", o.tokens, o.res.Usage.CompletionTokens)
			}
		})
	}
}

func TestApplyToolChoice(t *testing.T) {
	tools := json.RawMessage(twoTools)
	cases := []struct {
		name      string
		tools     json.RawMessage
		choice    ToolChoice
		wantTools string // "" = unchanged
		jsonMode  bool
		err       string
	}{
		{name: "auto", tools: tools},
		{name: "required", tools: tools, choice: ToolChoice{Required: true}, jsonMode: true},
		{name: "named", tools: tools, choice: ToolChoice{Name: "get_time"}, jsonMode: true,
			wantTools: `[{"type":"function","function":{"name":"get_time"}}]`},
		{name: "named, not a tool", tools: tools, choice: ToolChoice{Required: true, Name: "nope"}, err: `"nope"`},
		{name: "required without tools", choice: ToolChoice{Required: true}, err: "no tools"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := applyToolChoice(ChatRequest{Tools: c.tools, ToolChoice: c.choice})
			if c.err != "" {
				if kindOf(err) != KindBadRequest || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want a bad request naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.wantTools
			if want == "" {
				want = string(c.tools)
			}
			if string(got.Tools) != want || got.Options.JSONMode != c.jsonMode || got.ToolChoice.Required != c.jsonMode {
				t.Errorf("tools %s json mode %v choice %+v; want %s, %v", got.Tools, got.Options.JSONMode, got.ToolChoice, want, c.jsonMode)
			}
		})
	}
}

// TestToolChoiceRefusedBeforeLoading: a named function that is not among
// the tools is the request's fault, found before any model loads.
func TestToolChoiceRefusedBeforeLoading(t *testing.T) {
	l := &fakeLoader{}
	m := newTestManager(t, l, nil)
	req := ChatRequest{Model: "toy", Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`),
		Tools: json.RawMessage(twoTools), ToolChoice: ToolChoice{Name: "nope"}}
	if _, err := m.Chat(context.Background(), req, nil); kindOf(err) != KindBadRequest {
		t.Fatalf("err %v, want a bad request", err)
	}
	if l.loads != 0 {
		t.Errorf("%d loads for a refused request", l.loads)
	}
}
