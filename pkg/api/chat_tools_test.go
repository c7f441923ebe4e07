package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/helexa/helexa/pkg/engine"
)

const toolsJSON = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",` +
	`"properties":{"city":{"type":"string"}},"required":["city"]}}}]`

const toolChatBody = chatBody + `,"tools":` + toolsJSON

// textDeltas turns pieces of text into content deltas, one token each.
func textDeltas(pieces ...string) []engine.Delta {
	out := make([]engine.Delta, len(pieces))
	for i, p := range pieces {
		out[i] = engine.Delta{Content: p, Tokens: []engine.TokenInfo{{ID: int32(100 + i), Text: p}}}
	}
	return out
}

// weatherCall is a parsed call as the engine emits it.
func weatherCall(id, city string) engine.ToolCall {
	return engine.ToolCall{ID: id, Name: "get_weather", Arguments: `{"city":"` + city + `"}`}
}

// hermesDeltas is what the engine makes of a Qwen-style answer: reasoning,
// text, then a call (whose tokens ride along with it).
func hermesDeltas() []engine.Delta {
	return []engine.Delta{
		{Reasoning: "need weather", Tokens: []engine.TokenInfo{{ID: 1, Text: "need weather"}}},
		{Content: "I'll check.", Tokens: []engine.TokenInfo{{ID: 2, Text: "I'll check."}}},
		{ToolCalls: []engine.ToolCall{weatherCall("call_1", "Paris")}, Tokens: []engine.TokenInfo{{ID: 3, Text: "<tool_call>"}, {ID: 4, Text: "{...}</tool_call>"}}},
	}
}

func decodeCompletion(t *testing.T, status int, out string) ChatCompletion {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var cc ChatCompletion
	if err := json.Unmarshal([]byte(out), &cc); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return cc
}

// TestChatToolCallsNonStreaming: the engine's structured deltas become
// one OpenAI message, calls in tool_calls with the engine's ids.
func TestChatToolCallsNonStreaming(t *testing.T) {
	cases := []struct {
		name, body, content, finish string
		deltas                      []engine.Delta
		calls                       int
	}{
		{"hermes", toolChatBody + `}`, "I'll check.", "tool_calls", hermesDeltas(), 1},
		{"text only", toolChatBody + `}`, "It is sunny.", "stop", textDeltas("It is ", "sunny."), 0},
		{"cut off by length", toolChatBody + `}`, "<tool_call>{\"name\": \"get_weather\", \"argu", "length",
			textDeltas("<tool_call>", `{"name": "get_weather", "argu`), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := stdResult()
			res.FinishReason = c.finish
			f := &fakeService{deltas: c.deltas, result: res}
			status, out := post(t, newTestServer(t, f, nil), "/v1/chat/completions", c.body)
			cc := decodeCompletion(t, status, out)
			ch := cc.Choices[0]
			if ch.Message.Content != c.content || ch.FinishReason != c.finish || len(ch.Message.ToolCalls) != c.calls {
				t.Fatalf("message %+v finish %q, want content %q, %d calls, finish %q", ch.Message, ch.FinishReason, c.content, c.calls, c.finish)
			}
			if c.calls == 0 {
				return
			}
			tc := ch.Message.ToolCalls[0]
			if tc.ID != "call_1" || tc.Type != "function" || tc.Function.Name != "get_weather" ||
				tc.Function.Arguments != `{"city":"Paris"}` || ch.Message.ReasoningContent != "need weather" {
				t.Errorf("message %+v", ch.Message)
			}
		})
	}
}

// TestChatToolChoiceToEngine: tools and tool_choice reach the engine as
// given ("none" drops the tools; "required" and a named function require a
// call); a tool_choice the API cannot read is a 400.
func TestChatToolChoiceToEngine(t *testing.T) {
	cases := []struct {
		choice string
		tools  bool
		want   engine.ToolChoice
		status int
	}{
		{"", true, engine.ToolChoice{}, http.StatusOK},
		{`"auto"`, true, engine.ToolChoice{}, http.StatusOK},
		{`"none"`, false, engine.ToolChoice{}, http.StatusOK},
		{`"required"`, true, engine.ToolChoice{Required: true}, http.StatusOK},
		{`{"type":"function","function":{"name":"get_weather"}}`, true, engine.ToolChoice{Required: true, Name: "get_weather"}, http.StatusOK},
		{`"sometimes"`, false, engine.ToolChoice{}, http.StatusBadRequest},
		{`{"type":"function"}`, false, engine.ToolChoice{}, http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.choice, func(t *testing.T) {
			f := &fakeService{deltas: stdDeltas(), result: stdResult()}
			body := toolChatBody
			if c.choice != "" {
				body += `,"tool_choice":` + c.choice
			}
			status, out := post(t, newTestServer(t, f, nil), "/v1/chat/completions", body+`}`)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, out)
			}
			if status != http.StatusOK {
				return
			}
			got := f.lastChat()
			if got.ToolChoice != c.want || (got.Tools != nil) != c.tools {
				t.Errorf("engine request tool choice %+v tools %s; want %+v, tools %v", got.ToolChoice, got.Tools, c.want, c.tools)
			}
		})
	}
	f := &fakeService{}
	if status, out := post(t, newTestServer(t, f, nil), "/v1/chat/completions", chatBody+`,"tool_choice":"required"}`); status != http.StatusBadRequest {
		t.Errorf("tool_choice required without tools: %d %s", status, out)
	}
}

func TestChatToolCallsStreaming(t *testing.T) {
	res := stdResult()
	res.FinishReason = "tool_calls"
	f := &fakeService{deltas: hermesDeltas(), result: res}
	ts := newTestServer(t, f, nil)
	status, out := post(t, ts, "/v1/chat/completions", toolChatBody+`,"stream":true,"logprobs":true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	ev := sseEvents(t, out)
	if ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("last event %q", ev[len(ev)-1])
	}
	var content, reasoning string
	var calls []ToolCallDelta
	var finish []string
	tokens := 0
	for _, e := range ev[:len(ev)-1] {
		ch := decodeChunk(t, e)
		d := ch.Choices[0].Delta
		if d.Content != nil {
			content += *d.Content
		}
		reasoning += d.ReasoningContent
		calls = append(calls, d.ToolCalls...)
		if fr := ch.Choices[0].FinishReason; fr != nil {
			finish = append(finish, *fr)
		}
		if lp := ch.Choices[0].Logprobs; lp != nil {
			tokens += len(lp.Content)
		}
	}
	if content != "I'll check." || reasoning != "need weather" {
		t.Errorf("content %q reasoning %q", content, reasoning)
	}
	if len(calls) != 1 || calls[0].Index != 0 || calls[0].ID != "call_1" || calls[0].Type != "function" ||
		calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Errorf("tool calls %+v", calls)
	}
	if len(finish) != 1 || finish[0] != "tool_calls" {
		t.Errorf("finish reasons %v, want [tool_calls]", finish)
	}
	if tokens != 4 {
		t.Errorf("%d tokens carried logprobs, want all 4", tokens)
	}
	// The finish chunk comes after the call.
	if i, j := strings.Index(out, `"tool_calls":[`), strings.Index(out, `"finish_reason":"tool_calls"`); i < 0 || j < i {
		t.Errorf("tool_calls delta should precede the finish chunk:\n%s", out)
	}
}

// TestChatToolCallsOpenAIClient reads the calls with the official OpenAI Go
// client, streaming (through its accumulator) and not.
func TestChatToolCallsOpenAIClient(t *testing.T) {
	res := stdResult()
	res.FinishReason = "tool_calls"
	f := &fakeService{result: res, deltas: []engine.Delta{
		{ToolCalls: []engine.ToolCall{weatherCall("call_a", "Paris")}},
		{ToolCalls: []engine.ToolCall{weatherCall("call_b", "Rome")}},
	}}
	ts := newTestServer(t, f, nil)
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris and Rome?")},
		Tools: []openai.ChatCompletionToolParam{{Function: openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}},
	}
	ctx := context.Background()
	check := func(how string, msg openai.ChatCompletionMessage, finish string) {
		t.Helper()
		if finish != "tool_calls" || len(msg.ToolCalls) != 2 || msg.Content != "" {
			t.Fatalf("%s: finish %q message %+v", how, finish, msg)
		}
		for i, city := range []string{"Paris", "Rome"} {
			tc := msg.ToolCalls[i]
			if tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"`+city+`"}` || tc.ID == "" {
				t.Errorf("%s: call %d = %+v", how, i, tc)
			}
		}
		if msg.ToolCalls[0].ID == msg.ToolCalls[1].ID {
			t.Errorf("%s: calls share the id %s", how, msg.ToolCalls[0].ID)
		}
	}
	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	check("non-streaming", full.Choices[0].Message, full.Choices[0].FinishReason)

	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	finished := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if _, ok := acc.JustFinishedToolCall(); ok {
			finished++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	check("streaming", acc.Choices[0].Message, acc.Choices[0].FinishReason)
	if finished != 2 {
		t.Errorf("accumulator finished %d tool calls, want 2", finished)
	}
}
