package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestClientChatToolCalls checks that the Client hands on the daemon's
// tool_calls as Delta.ToolCalls, whether the model's call text arrives in
// pieces or whole, and leaves the markup in Content without tools.
func TestClientChatToolCalls(t *testing.T) {
	twoCalls := `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>` +
		`<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>`
	cases := []struct {
		name    string
		deltas  []engine.Delta
		tools   json.RawMessage
		content string
		cities  []string
		finish  string
	}{
		{name: "split across deltas", deltas: hermesDeltas(), tools: json.RawMessage(toolsJSON),
			content: "I'll check.", cities: []string{"Paris"}, finish: "tool_calls"},
		{name: "two calls in one delta", deltas: textDeltas(twoCalls), tools: json.RawMessage(toolsJSON),
			cities: []string{"Paris", "Oslo"}, finish: "tool_calls"},
		{name: "no tools keeps the text", deltas: textDeltas(twoCalls),
			content: twoCalls, finish: "stop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{deltas: tc.deltas, result: stdResult()}
			c := newTestClient(t, f, nil)
			req := engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"weather?"}]`), Tools: tc.tools}
			var content strings.Builder
			var calls []engine.ToolCall
			res, err := c.Chat(context.Background(), req, func(d engine.Delta) error {
				content.WriteString(d.Content)
				calls = append(calls, d.ToolCalls...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if content.String() != tc.content {
				t.Errorf("content %q, want %q", content.String(), tc.content)
			}
			if len(calls) != len(tc.cities) {
				t.Fatalf("tool calls %+v, want %d", calls, len(tc.cities))
			}
			ids := map[string]bool{}
			for i, call := range calls {
				want := `{"city":"` + tc.cities[i] + `"}`
				if call.Name != "get_weather" || call.Arguments != want || !strings.HasPrefix(call.ID, "call_") {
					t.Errorf("call %d = %+v, want get_weather %s", i, call, want)
				}
				ids[call.ID] = true
			}
			if len(ids) != len(calls) {
				t.Errorf("call ids are not distinct: %+v", calls)
			}
			if res.FinishReason != tc.finish {
				t.Errorf("finish reason %q, want %q", res.FinishReason, tc.finish)
			}
		})
	}
}
