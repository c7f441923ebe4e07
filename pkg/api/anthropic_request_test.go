package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// decodeMessages decodes a Messages request body as the handler does.
func decodeMessages(t *testing.T, body string) MessagesRequest {
	t.Helper()
	var r MessagesRequest
	if err := decodeBody(strings.NewReader(body), &r, false); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return r
}

// TestMessagesTranslation: a Messages request becomes the OpenAI-style
// conversation chat templates read.
func TestMessagesTranslation(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"system string, user string",
			`{"system":"be brief","messages":[{"role":"user","content":"hi"}]}`,
			`[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`},
		{"system text blocks with cache_control, user text blocks",
			`{"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}],` +
				`"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}`,
			`[{"role":"system","content":"a\nb"},{"role":"user","content":"x\ny"}]`},
		{"a tool round trip",
			`{"messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"look it up","signature":"sig"},{"type":"text","text":"Checking."},` +
				`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},{"type":"text","text":"and tomorrow?"}]}]}`,
			`[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":"Checking.","reasoning_content":"look it up","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
				`{"role":"tool","content":"sunny","tool_call_id":"toolu_1","name":"get_weather"},{"role":"user","content":"and tomorrow?"}]`},
		{"tool_result as text blocks, an error, no text after it",
			`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"boom"}]}]}]}`,
			`[{"role":"tool","content":"Error: boom","tool_call_id":"t"}]`},
		{"a system turn inside the conversation (Claude Code's shape) stays in place",
			`{"system":[{"type":"text","text":"billing"},{"type":"text","text":"agent","cache_control":{"type":"ephemeral"}}],` +
				`"metadata":{"user_id":"{\"session_id\":\"s\"}"},"thinking":{"type":"adaptive","display":"omitted"},` +
				`"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"output_config":{"effort":"high"},` +
				`"messages":[{"role":"user","content":[{"type":"text","text":"reminder"},{"type":"text","text":"say hi","cache_control":{"type":"ephemeral"}}]},` +
				`{"role":"system","content":[{"type":"text","text":"# Environment"},{"type":"text","text":"cwd"}]}]}`,
			`[{"role":"system","content":"billing\nagent"},{"role":"user","content":"reminder\nsay hi"},{"role":"system","content":"# Environment\ncwd"}]`},
		{"assistant with only a tool call has empty content, redacted thinking dropped",
			`{"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"xx"},{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`,
			`[{"role":"assistant","content":"","tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeMessages(t, tt.body)
			r.Model = "m"
			got, err := r.toEngine(false)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Messages) != tt.want {
				t.Errorf("messages\n%s\nwant\n%s", got.Messages, tt.want)
			}
		})
	}
}

// TestMessagesOptions: sampling, stop sequences, tools, tool_choice and
// thinking reach the engine request.
func TestMessagesOptions(t *testing.T) {
	const tools = `"tools":[{"name":"get_weather","description":"w","input_schema":{"type":"object"}},{"name":"f","input_schema":{"type":"object"}}]`
	wantTools := `[{"type":"function","function":{"name":"get_weather","description":"w","parameters":{"type":"object"}}},` +
		`{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	tests := []struct {
		name, extra string
		check       func(t *testing.T, r engine.ChatRequest)
	}{
		{"sampling and stops", `,"temperature":0.5,"top_p":0.9,"top_k":40,"stop_sequences":["END"],"metadata":{"user_id":"u"}`,
			func(t *testing.T, r engine.ChatRequest) {
				s := r.Options.Sampling
				if s.Temperature != 0.5 || s.TopP != 0.9 || s.TopK != 40 || !reflect.DeepEqual(r.Options.Stop, []string{"END"}) || r.Options.MaxTokens != 64 {
					t.Errorf("options %+v", r.Options)
				}
			}},
		{"tools, auto", "," + tools + `,"tool_choice":{"type":"auto"}`, func(t *testing.T, r engine.ChatRequest) {
			if string(r.Tools) != wantTools || r.ToolChoice != (engine.ToolChoice{}) {
				t.Errorf("tools %s choice %+v", r.Tools, r.ToolChoice)
			}
		}},
		{"any", "," + tools + `,"tool_choice":{"type":"any","disable_parallel_tool_use":true}`, func(t *testing.T, r engine.ChatRequest) {
			if r.ToolChoice != (engine.ToolChoice{Required: true}) {
				t.Errorf("choice %+v", r.ToolChoice)
			}
		}},
		{"tool", "," + tools + `,"tool_choice":{"type":"tool","name":"f"}`, func(t *testing.T, r engine.ChatRequest) {
			if r.ToolChoice != (engine.ToolChoice{Required: true, Name: "f"}) {
				t.Errorf("choice %+v", r.ToolChoice)
			}
		}},
		{"none", "," + tools + `,"tool_choice":{"type":"none"}`, func(t *testing.T, r engine.ChatRequest) {
			if r.Tools != nil || r.ToolChoice.Required {
				t.Errorf("tools %s choice %+v", r.Tools, r.ToolChoice)
			}
		}},
		{"thinking enabled", `,"thinking":{"type":"enabled","budget_tokens":1024}`, func(t *testing.T, r engine.ChatRequest) {
			if r.TemplateKwargs["enable_thinking"] != true {
				t.Errorf("kwargs %v", r.TemplateKwargs)
			}
		}},
		{"thinking disabled", `,"thinking":{"type":"disabled"}`, func(t *testing.T, r engine.ChatRequest) {
			if r.TemplateKwargs["enable_thinking"] != false {
				t.Errorf("kwargs %v", r.TemplateKwargs)
			}
		}},
		{"no thinking: the model's default", ``, func(t *testing.T, r engine.ChatRequest) {
			if r.TemplateKwargs != nil {
				t.Errorf("kwargs %v", r.TemplateKwargs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeMessages(t, `{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}]`+tt.extra+`}`)
			got, err := r.toEngine(true)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

// TestMessagesRequestErrors: what Anthropic refuses, and what helexa
// cannot do, is a 400 that says why.
func TestMessagesRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `"max_tokens" is required`},
		{"max_tokens 0", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "at least 1"},
		{"no messages", `{"model":"m","max_tokens":8}`, `"messages" is required`},
		{"no model", `{"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, `"model" is required`},
		{"tool role", `{"model":"m","max_tokens":8,"messages":[{"role":"tool","content":"hi"}]}`, `role is "tool"`},
		{"image in a system turn", `{"model":"m","max_tokens":8,"messages":[{"role":"system","content":[{"type":"image","source":{}}]}]}`, "no vision"},
		{"image", `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}`, "no vision"},
		{"image in a tool result", `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]}]}]}`, "no vision"},
		{"tool_use in a user turn", `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, `type "tool_use"`},
		{"tool_use input not an object", `{"model":"m","max_tokens":8,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}]}`, "JSON object"},
		{"temperature out of range", `{"model":"m","max_tokens":8,"temperature":3,"messages":[{"role":"user","content":"hi"}]}`, "temperature"},
		{"any without tools", `{"model":"m","max_tokens":8,"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"hi"}]}`, "no tools"},
		{"server tool", `{"model":"m","max_tokens":8,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"hi"}]}`, "server tool"},
		{"thinking type", `{"model":"m","max_tokens":8,"thinking":{"type":"sometimes"},"messages":[{"role":"user","content":"hi"}]}`, "thinking type"},
		{"empty stop sequence", `{"model":"m","max_tokens":8,"stop_sequences":[""],"messages":[{"role":"user","content":"hi"}]}`, "stop_sequences[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeMessages(t, tt.body)
			_, err := r.toEngine(true)
			var re *engine.Error
			if err == nil || !errors.As(err, &re) || re.Kind != engine.KindBadRequest || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a bad request naming %q", err, tt.want)
			}
		})
	}
	var r MessagesRequest
	if err := json.Unmarshal([]byte(`{"system":[{"type":"image"}]}`), &r); err == nil {
		t.Error("a system image block was accepted")
	}
}
