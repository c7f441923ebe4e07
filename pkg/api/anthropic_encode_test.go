package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// eventLine renders an event as "name data" for comparison.
func eventLine(t *testing.T, ev namedEvent) string {
	t.Helper()
	b, err := json.Marshal(ev.data)
	if err != nil {
		t.Fatal(err)
	}
	var typ struct{ Type string }
	if err := json.Unmarshal(b, &typ); err != nil || typ.Type != ev.name {
		t.Errorf("event %s has type %q", ev.name, typ.Type)
	}
	return string(b)
}

// TestMessageEncoder: deltas become content blocks in the order the model
// wrote them; the assembled message is what the events carry.
func TestMessageEncoder(t *testing.T) {
	tests := []struct {
		name    string
		deltas  []engine.Delta
		events  []string
		content string
	}{
		{"text", []engine.Delta{{Content: "Hel"}, {Content: "lo"}},
			[]string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
				`{"type":"content_block_stop","index":0}`,
			},
			`[{"type":"text","text":"Hello"}]`},
		{"thinking, then text in the same delta, then a tool call",
			[]engine.Delta{{Reasoning: "hmm"}, {Reasoning: "!", Content: "ok"}, {ToolCalls: []engine.ToolCall{{ID: "call_ab", Name: "f", Arguments: `{"x":1}`}}}},
			[]string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"!"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_ab","name":"f","input":{}}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"x\":1}"}}`,
				`{"type":"content_block_stop","index":2}`,
			},
			`[{"type":"thinking","thinking":"hmm!","signature":""},{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_ab","name":"f","input":{"x":1}}]`},
		{"two calls, empty and malformed arguments, a model's own id",
			[]engine.Delta{{ToolCalls: []engine.ToolCall{{ID: "abc123XYZ", Name: "f"}, {ID: "call_2", Name: "g", Arguments: "not json"}}}},
			[]string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_abc123XYZ","name":"f","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"g","input":{}}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"arguments\":\"not json\"}"}}`,
				`{"type":"content_block_stop","index":1}`,
			},
			`[{"type":"tool_use","id":"toolu_abc123XYZ","name":"f","input":{}},{"type":"tool_use","id":"toolu_2","name":"g","input":{"arguments":"not json"}}]`},
		{"nothing", nil, nil, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var enc messageEncoder
			var asm messageAssembler
			var got []string
			for _, d := range tt.deltas {
				evs := enc.delta(d)
				asm.apply(evs)
				for _, ev := range evs {
					got = append(got, eventLine(t, ev))
				}
			}
			evs := enc.end()
			asm.apply(evs)
			for _, ev := range evs {
				got = append(got, eventLine(t, ev))
			}
			if strings.Join(got, "\n") != strings.Join(tt.events, "\n") {
				t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.events, "\n"))
			}
			content, _ := json.Marshal(asm.content())
			if string(content) != tt.content {
				t.Errorf("content %s, want %s", content, tt.content)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	tests := []struct {
		res          engine.Result
		reason, stop string
	}{
		{engine.Result{FinishReason: "stop"}, "end_turn", ""},
		{engine.Result{FinishReason: "stop", StopSequence: "END"}, "stop_sequence", "END"},
		{engine.Result{FinishReason: "length"}, "max_tokens", ""},
		{engine.Result{FinishReason: "tool_calls"}, "tool_use", ""},
	}
	for _, tt := range tests {
		reason, seq := stopReason(tt.res)
		got := ""
		if seq != nil {
			got = *seq
		}
		if *reason != tt.reason || got != tt.stop {
			t.Errorf("%+v: %s %q, want %s %q", tt.res, *reason, got, tt.reason, tt.stop)
		}
	}
}

func TestAnthropicErrorType(t *testing.T) {
	for status, want := range map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		405: "invalid_request_error", 413: "request_too_large", 415: "invalid_request_error", 429: "rate_limit_error",
		500: "api_error", 501: "api_error", 503: "overloaded_error",
	} {
		if got := anthropicErrorType(status); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
}
