package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestResponseEncoder: the engine's deltas become output items and the
// Responses event sequence, numbered from 0, for streamed and
// non-streamed responses alike.
func TestResponseEncoder(t *testing.T) {
	tok := func(n int) []engine.TokenInfo { return make([]engine.TokenInfo, n) }
	call := engine.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	tests := []struct {
		name   string
		deltas []engine.Delta
		finish string
		events string // event types, space-separated, without the "response." prefix
		output string // the output items: type:text, space-separated
		status string
	}{
		{"text", []engine.Delta{{Content: "Hel"}, {Content: "lo"}}, "stop",
			"created in_progress output_item.added content_part.added output_text.delta output_text.delta output_text.done content_part.done output_item.done completed",
			"message:Hello", "completed"},
		{"reasoning then text", []engine.Delta{{Reasoning: "hm", Tokens: tok(2)}, {Content: "Hi"}}, "stop",
			"created in_progress output_item.added content_part.added reasoning_text.delta reasoning_text.done content_part.done output_item.done " +
				"output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done completed",
			"reasoning:hm message:Hi", "completed"},
		{"text then a call", []engine.Delta{{Content: "Let me check."}, {ToolCalls: []engine.ToolCall{call}}}, "tool_calls",
			"created in_progress output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done " +
				"output_item.added function_call_arguments.delta function_call_arguments.done output_item.done completed",
			`message:Let_me_check. function_call:get_weather{"city":"Paris"}`, "completed"},
		{"out of tokens", []engine.Delta{{Content: "Once"}}, "length",
			"created in_progress output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done incomplete",
			"message:Once", "incomplete"},
		{"no output", nil, "stop", "created in_progress completed", "", "completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			var events []map[string]any
			resp := &Response{ID: "resp_1", Object: "response", Status: statusInProgress, Output: []OutputItem{}}
			enc := newResponseEncoder(resp, func(event string, v any) error {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				names = append(names, strings.TrimPrefix(event, "response."))
				events = append(events, m)
				return nil
			})
			for _, d := range tt.deltas {
				if err := enc.delta(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.finish(engine.Result{FinishReason: tt.finish, Usage: engine.Usage{PromptTokens: 9, CachedTokens: 3, CompletionTokens: 4}}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(names, " "); got != tt.events {
				t.Errorf("events\n %s\nwant\n %s", got, tt.events)
			}
			for i, ev := range events {
				if ev["type"] != "response."+names[i] || ev["sequence_number"] != float64(i) {
					t.Errorf("event %d %s: type %v, sequence_number %v", i, names[i], ev["type"], ev["sequence_number"])
				}
			}
			if got := outputSummary(resp.Output); got != tt.output {
				t.Errorf("output %q, want %q", got, tt.output)
			}
			last := events[len(events)-1]["response"].(map[string]any)
			if resp.Status != tt.status || last["status"] != tt.status {
				t.Errorf("status %q (event %v), want %q", resp.Status, last["status"], tt.status)
			}
			u := resp.Usage
			if u == nil || u.InputTokens != 9 || u.InputTokensDetails.CachedTokens != 3 || u.OutputTokens != 4 || u.TotalTokens != 13 {
				t.Errorf("usage %+v", u)
			}
			if tt.finish == "length" && (resp.IncompleteDetails == nil || resp.IncompleteDetails.Reason != "max_output_tokens") {
				t.Errorf("incomplete_details %+v", resp.IncompleteDetails)
			}
			checkItemEvents(t, events, resp.Output)
		})
	}
}

// outputSummary writes items as type:text (spaces in text as _).
func outputSummary(items []OutputItem) string {
	var out []string
	for _, it := range items {
		s := it.Type + ":"
		switch it.Type {
		case itemFunctionCall:
			s += it.Name + *it.Arguments
		default:
			s += strings.ReplaceAll(it.Content[0].Text, " ", "_")
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// checkItemEvents: every output_item.done carries the final item at its
// output_index, and every delta names its item.
func checkItemEvents(t *testing.T, events []map[string]any, output []OutputItem) {
	t.Helper()
	for _, ev := range events {
		idx, ok := ev["output_index"].(float64)
		if !ok {
			continue
		}
		item := output[int(idx)]
		if id, ok := ev["item_id"]; ok && id != item.ID {
			t.Errorf("%s: item_id %v, want %s", ev["type"], id, item.ID)
		}
		if ev["type"] == evItemDone {
			got := ev["item"].(map[string]any)
			if got["id"] != item.ID || got["status"] != item.Status {
				t.Errorf("output_item.done %v, want %+v", got, item)
			}
		}
		if ev["type"] == evItemAdded && ev["item"].(map[string]any)["status"] != statusInProgress {
			t.Errorf("output_item.added %v: want status in_progress", ev["item"])
		}
	}
	for _, it := range output {
		prefix := map[string]string{itemMessage: "msg_", itemReasoning: "rs_", itemFunctionCall: "fc_"}[it.Type]
		if !strings.HasPrefix(it.ID, prefix) {
			t.Errorf("%s id %q, want prefix %s", it.Type, it.ID, prefix)
		}
	}
}
