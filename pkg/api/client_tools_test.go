package api

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestClientChatToolCalls checks that the Client gives back the engine's
// structured deltas: tool calls (ids kept, one delta or several), content
// and the finish reason, as the in-process engine gave them to the daemon.
func TestClientChatToolCalls(t *testing.T) {
	twoCalls := []engine.Delta{{Content: "Checking.", ToolCalls: []engine.ToolCall{weatherCall("call_p", "Paris"), weatherCall("call_o", "Oslo")}}}
	cases := []struct {
		name    string
		deltas  []engine.Delta
		content string
		calls   []engine.ToolCall
		finish  string
	}{
		{name: "reasoning, text, then a call", deltas: hermesDeltas(),
			content: "I'll check.", calls: []engine.ToolCall{weatherCall("call_1", "Paris")}, finish: "tool_calls"},
		{name: "two calls in one delta", deltas: twoCalls,
			content: "Checking.", calls: twoCalls[0].ToolCalls, finish: "tool_calls"},
		{name: "text only", deltas: textDeltas("<tool_call>", "x"), content: "<tool_call>x", finish: "stop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := stdResult()
			res.FinishReason = tc.finish
			f := &fakeService{deltas: tc.deltas, result: res}
			c := newTestClient(t, f, nil)
			req := engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"weather?"}]`), Tools: json.RawMessage(toolsJSON)}
			var content strings.Builder
			var calls []engine.ToolCall
			got, err := c.Chat(context.Background(), req, func(d engine.Delta) error {
				content.WriteString(d.Content)
				calls = append(calls, d.ToolCalls...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if content.String() != tc.content || !reflect.DeepEqual(calls, tc.calls) || got.FinishReason != tc.finish {
				t.Errorf("content %q calls %+v finish %q; want %q %+v %q", content.String(), calls, got.FinishReason, tc.content, tc.calls, tc.finish)
			}
		})
	}
}

// TestClientToolChoiceRoundTrip: the Client sends a tool choice as OpenAI
// tool_choice, and the daemon hands the engine the same choice.
func TestClientToolChoiceRoundTrip(t *testing.T) {
	for _, choice := range []engine.ToolChoice{{}, {Required: true}, {Required: true, Name: "get_weather"}} {
		f := &fakeService{deltas: stdDeltas(), result: stdResult()}
		c := newTestClient(t, f, nil)
		req := engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"weather?"}]`),
			Tools: json.RawMessage(toolsJSON), ToolChoice: choice}
		if _, err := c.Chat(context.Background(), req, func(engine.Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got := f.lastChat(); got.ToolChoice != choice || string(got.Tools) != toolsJSON {
			t.Errorf("sent %+v; the daemon's engine got %+v with tools %s", choice, got.ToolChoice, got.Tools)
		}
	}
}
