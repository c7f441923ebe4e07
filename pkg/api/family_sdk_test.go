package api

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/engine"
)

// scriptedDeltas replays text as a model would generate it, a few runes
// per delta, with reasoning split out by the model's reasoning format as
// the runner does.
func scriptedDeltas(t *testing.T, template, text string) []engine.Delta {
	t.Helper()
	r, ok := chat.DetectReasoning(template, nil)
	if !ok {
		t.Fatal("template has no reasoning format")
	}
	s := r.NewSplitter(false)
	var out []engine.Delta
	runes := []rune(text)
	for i := 0; i < len(runes); i += 3 {
		piece := string(runes[i:min(len(runes), i+3)])
		rs, cs := s.Push(piece)
		out = append(out, engine.Delta{Reasoning: rs, Content: cs, Tokens: []engine.TokenInfo{{ID: int32(i), Text: piece}}})
	}
	rs, cs := s.Flush()
	return append(out, engine.Delta{Reasoning: rs, Content: cs})
}

// TestFamilyFormatsOpenAIClient: a model served with the Mistral
// (Ministral reasoning) and the DeepSeek R1 template, whose scripted
// generation writes reasoning and two calls in its family's format, gives
// the OpenAI Go SDK tool_calls and reasoning_content, streamed and not.
func TestFamilyFormatsOpenAIClient(t *testing.T) {
	cases := []struct{ template, text string }{
		{"mistralai-Ministral-3-14B-Reasoning-2512.jinja",
			`[THINK]The user wants weather and museums.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"query": "museums"}`},
		{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
			"<think>\nThe user wants weather and museums.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n" +
				"<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"museums\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "models", "chat", "testdata", "corpus", "templates", c.template))
			if err != nil {
				t.Fatal(err)
			}
			f := &fakeService{result: stdResult(), deltas: scriptedDeltas(t, string(src), c.text),
				details: engine.ModelDetails{Template: string(src)}}
			ts := newTestServer(t, f, nil)
			client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
			params := openai.ChatCompletionNewParams{
				Model:    "m",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris, and museums?")},
				Tools: []openai.ChatCompletionToolParam{
					{Function: openai.FunctionDefinitionParam{Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}}},
					{Function: openai.FunctionDefinitionParam{Name: "search", Parameters: openai.FunctionParameters{"type": "object"}}},
				},
			}
			check := func(how string, msg openai.ChatCompletionMessage, finish string) {
				t.Helper()
				if finish != "tool_calls" || len(msg.ToolCalls) != 2 || msg.Content != "" {
					t.Fatalf("%s: finish %q message %+v", how, finish, msg)
				}
				want := [][2]string{{"get_weather", `{"city":"Paris"}`}, {"search", `{"query":"museums"}`}}
				for i, w := range want {
					if tc := msg.ToolCalls[i]; tc.Function.Name != w[0] || tc.Function.Arguments != w[1] || tc.ID == "" {
						t.Errorf("%s: call %d = %+v", how, i, tc)
					}
				}
				if got := msg.JSON.ExtraFields["reasoning_content"].Raw(); got != `"The user wants weather and museums."` {
					t.Errorf("%s: reasoning_content %s", how, got)
				}
			}
			ctx := context.Background()
			full, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			check("non-streaming", full.Choices[0].Message, full.Choices[0].FinishReason)

			stream := client.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			reasoning := ""
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				if len(ch.Choices) > 0 {
					if raw := ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"].Raw(); raw != "" && raw != "null" {
						reasoning += raw[1 : len(raw)-1]
					}
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			msg := acc.Choices[0].Message
			if reasoning != "The user wants weather and museums." {
				t.Errorf("streamed reasoning_content %q", reasoning)
			}
			msg.JSON.ExtraFields = full.Choices[0].Message.JSON.ExtraFields // the accumulator drops extra fields
			check("streaming", msg, acc.Choices[0].FinishReason)
		})
	}
}
