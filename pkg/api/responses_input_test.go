package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestResponsesInputTurns: input items become the chat messages the
// template renders.
func TestResponsesInputTurns(t *testing.T) {
	prev := []chatTurn{{Role: "user", Content: "hi"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "call_old", Type: "function", Function: FunctionCall{Name: "get_time"}}}}}
	tests := []struct {
		name, input string
		prev        []chatTurn
		want        string // the turns as JSON
		err         string
	}{
		{"string", `"Hello"`, nil, `[{"role":"user","content":"Hello"}]`, ""},
		{"message parts", `[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]`, nil,
			`[{"role":"user","content":"a\nb"}]`, ""},
		{"developer is system", `[{"type":"message","role":"developer","content":"be brief"},{"role":"user","content":"x"}]`, nil,
			`[{"role":"system","content":"be brief"},{"role":"user","content":"x"}]`, ""},
		{"assistant side merged", `[{"role":"user","content":"w?"},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"think"}]},` +
			`{"role":"assistant","content":[{"type":"output_text","text":"Let me check."}]},` +
			`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"sunny"}]`, nil,
			`[{"role":"user","content":"w?"},{"role":"assistant","content":"Let me check.","reasoning_content":"think","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
				`{"role":"tool","content":"sunny","tool_call_id":"call_1","name":"get_weather"}]`, ""},
		{"reasoning summary", `[{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}]},{"role":"assistant","content":"a"}]`, nil,
			`[{"role":"assistant","content":"a","reasoning_content":"s"}]`, ""},
		{"output names a previous call", `[{"type":"function_call_output","call_id":"call_old","output":[{"type":"input_text","text":"12:00"}]}]`, prev,
			`[{"role":"tool","content":"12:00","tool_call_id":"call_old","name":"get_time"}]`, ""},
		{"image", `[{"role":"user","content":[{"type":"input_image","image_url":"data:"}]}]`, nil, "", "read text only"},
		{"file", `[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]`, nil, "", "read text only"},
		{"no role", `[{"type":"message","content":"x"}]`, nil, "", `no "role"`},
		{"bad role", `[{"role":"robot","content":"x"}]`, nil, "", `role "robot"`},
		{"output without call id", `[{"type":"function_call_output","output":"x"}]`, nil, "", "call_id"},
		{"call without name", `[{"type":"function_call","call_id":"c"}]`, nil, "", "call_id"},
		{"item reference", `[{"type":"item_reference","id":"msg_1"}]`, nil, "", "previous_response_id"},
		{"hosted tool item", `[{"type":"web_search_call","id":"ws"}]`, nil, "", `"web_search_call"`},
		{"not a list", `{"role":"user"}`, nil, "", "string or a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inputTurns(json.RawMessage(tt.input), tt.prev)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || errorStatus(toRunnerError(err).Kind) != 400 {
					t.Fatalf("err %v, want a 400 mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := marshalTurns(got)
			if string(b) != tt.want {
				t.Errorf("turns\n %s\nwant\n %s", b, tt.want)
			}
		})
	}
}

// TestResponsesPlan: the request's fields map onto the engine's chat
// request as chat completions maps its own.
func TestResponsesPlan(t *testing.T) {
	prev := []chatTurn{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "ok"}}
	tests := []struct {
		name, body string
		prev       []chatTurn
		check      func(t *testing.T, p responsePlan)
		err        string
	}{
		{"instructions first, not in history", `{"model":"m","input":"hi","instructions":"be brief","max_output_tokens":7,"temperature":0.5,"top_p":0.9}`, nil,
			func(t *testing.T, p responsePlan) {
				wantJSON(t, p.chat.Messages, `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`)
				if len(p.history) != 1 || p.history[0].Role != "user" || !p.store {
					t.Errorf("history %+v store %v", p.history, p.store)
				}
				o := p.chat.Options
				if o.MaxTokens != 7 || o.Sampling.Temperature != 0.5 || o.Sampling.TopP != 0.9 || o.JSONMode {
					t.Errorf("options %+v", o)
				}
			}, ""},
		{"instructions join a system input", `{"model":"m","input":[{"role":"system","content":"sys"},{"role":"user","content":"u"}],"instructions":"ins"}`, nil,
			func(t *testing.T, p responsePlan) {
				wantJSON(t, p.chat.Messages, `[{"role":"system","content":"ins\nsys"},{"role":"user","content":"u"}]`)
			}, ""},
		{"previous conversation first", `{"model":"m","input":"more","store":false}`, prev,
			func(t *testing.T, p responsePlan) {
				wantJSON(t, p.chat.Messages, `[{"role":"user","content":"earlier"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]`)
				if p.store || len(p.history) != 3 {
					t.Errorf("store %v history %+v", p.store, p.history)
				}
			}, ""},
		{"json_object", `{"model":"m","input":"x","text":{"format":{"type":"json_object"}}}`, nil,
			func(t *testing.T, p responsePlan) {
				if !p.chat.Options.JSONMode {
					t.Error("json_object did not set JSON mode")
				}
			}, ""},
		{"effort low", `{"model":"m","input":"x","reasoning":{"effort":"low"}}`, nil,
			func(t *testing.T, p responsePlan) {
				if p.chat.TemplateKwargs["enable_thinking"] != true || p.chat.TemplateKwargs["reasoning_effort"] != "low" {
					t.Errorf("kwargs %v", p.chat.TemplateKwargs)
				}
			}, ""},
		{"effort none; explicit kwargs win", `{"model":"m","input":"x","reasoning":{"effort":"none"},"chat_template_kwargs":{"reasoning_effort":"mine"}}`, nil,
			func(t *testing.T, p responsePlan) {
				if p.chat.TemplateKwargs["enable_thinking"] != false || p.chat.TemplateKwargs["reasoning_effort"] != "mine" {
					t.Errorf("kwargs %v", p.chat.TemplateKwargs)
				}
			}, ""},
		{"function tools and a named choice", `{"model":"m","input":"x","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true}],"tool_choice":{"type":"function","name":"f"}}`, nil,
			func(t *testing.T, p responsePlan) {
				wantJSON(t, p.chat.Tools, `[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]`)
				if p.chat.ToolChoice != (engine.ToolChoice{Required: true, Name: "f"}) {
					t.Errorf("tool choice %+v", p.chat.ToolChoice)
				}
			}, ""},
		{"tool_choice none drops tools", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":"none"}`, nil,
			func(t *testing.T, p responsePlan) {
				if p.chat.Tools != nil {
					t.Errorf("tools %s", p.chat.Tools)
				}
			}, ""},
		{"json_schema", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"s","schema":{}}}}`, nil, nil, "json_schema (structured outputs) is not supported"},
		{"namespaced functions flattened, hosted tools not offered (Codex's shape)",
			`{"model":"m","input":"x","tool_choice":"auto","parallel_tool_calls":true,"store":false,"include":["reasoning.encrypted_content"],` +
				`"prompt_cache_key":"k","client_metadata":{"a":"b"},"tools":[{"type":"function","name":"exec_command","strict":false,"parameters":{"type":"object"}},` +
				`{"type":"namespace","name":"multi_agent_v1","description":"sub-agents","tools":[{"type":"function","name":"close_agent","parameters":{"type":"object"}}]},` +
				`{"type":"web_search","external_web_access":false}]}`, nil,
			func(t *testing.T, p responsePlan) {
				wantJSON(t, p.chat.Tools, `[{"type":"function","function":{"name":"exec_command","parameters":{"type":"object"}}},{"type":"function","function":{"name":"close_agent","parameters":{"type":"object"}}}]`)
			}, ""},
		{"only hosted tools: none offered", `{"model":"m","input":"x","tools":[{"type":"web_search"},{"type":"file_search"}]}`, nil,
			func(t *testing.T, p responsePlan) {
				if p.chat.Tools != nil {
					t.Errorf("tools %s", p.chat.Tools)
				}
			}, ""},
		{"tool without type", `{"model":"m","input":"x","tools":[{"name":"f"}]}`, nil, nil, `tools[0] has no "type"`},
		{"namespaced function without name", `{"model":"m","input":"x","tools":[{"type":"namespace","name":"n","tools":[{"type":"function"}]}]}`, nil, nil, `tools[0].tools[0] has no "name"`},
		{"required without tools", `{"model":"m","input":"x","tool_choice":"required"}`, nil, nil, "needs tools"},
		{"bad effort", `{"model":"m","input":"x","reasoning":{"effort":"max"}}`, nil, nil, "reasoning.effort"},
		{"max_output_tokens 0", `{"model":"m","input":"x","max_output_tokens":0}`, nil, nil, "max_output_tokens"},
		{"temperature range", `{"model":"m","input":"x","temperature":3}`, nil, nil, "temperature"},
		{"no input", `{"model":"m"}`, nil, nil, `"input" is required`},
		{"no model", `{"input":"x"}`, nil, nil, `"model" is required`},
		{"background", `{"model":"m","input":"x","background":true}`, nil, nil, "background"},
		{"conversation", `{"model":"m","input":"x","conversation":"conv_1"}`, nil, nil, "conversation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req ResponsesRequest
			if err := decodeBody(strings.NewReader(tt.body), &req, false); err != nil {
				t.Fatal(err)
			}
			p, err := req.plan(tt.prev)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

func wantJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	if string(got) != want {
		t.Errorf("got\n %s\nwant\n %s", got, want)
	}
}
