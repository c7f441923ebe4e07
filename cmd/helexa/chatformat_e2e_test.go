package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
)

// corpusTemplate is a published chat template from the template corpus
// (llama.cpp's models/templates/ at commit 3f545bec).
func corpusTemplate(name string) string {
	return filepath.Join("..", "..", "pkg", "models", "chat", "testdata", "corpus", "templates", name)
}

// TestChatFormatsEndToEnd: `helexa serve` with a fixture model given the
// Mistral and the DeepSeek chat template (HELEXA_CHAT_TEMPLATE) and a
// scripted generation (HELEXA_TEST_REPLAY) answers the OpenAI Go SDK with
// structured tool_calls and reasoning_content, streamed and not.
func TestChatFormatsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	// Each format on a vocabulary of its kind: Mistral's SentencePiece
	// (stories260K's) and DeepSeek's byte-level BPE (Qwen3's), which can
	// spell "▁" (SentencePiece reads it as a space).
	cases := []struct {
		name, model, template, script string
		kwargs                        map[string]any
	}{
		{"mistral", "stories260K.gguf", "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
			`[THINK]The user wants the weather.[/THINK]Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`, nil},
		// The template's generation prompt opens <think> when thinking is on.
		{"deepseek", "qwen3-tiny-Q8_0.gguf", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
			"The user wants the weather.\n</think>\n\nLet me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			map[string]any{"enable_thinking": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model := fixtures.Path(t, "models", c.model)
			script := filepath.Join(t.TempDir(), "script.txt")
			if err := os.WriteFile(script, []byte(c.script), 0o600); err != nil {
				t.Fatal(err)
			}
			tmpl, err := filepath.Abs(corpusTemplate(c.template))
			if err != nil {
				t.Fatal(err)
			}
			addr, _, logs := startDaemon(t, "", envvars.ChatTemplate.Name+"="+tmpl, envvars.TestReplay.Name+"="+script)
			defer logOnFailure(t, logs)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			client := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
			params := openai.ChatCompletionNewParams{
				Model:    model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
				Tools: []openai.ChatCompletionToolParam{{Function: shared.FunctionDefinitionParam{Name: "get_weather",
					Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
				MaxTokens: openai.Int(400),
			}
			var opts []option.RequestOption
			if c.kwargs != nil {
				opts = append(opts, option.WithJSONSet("chat_template_kwargs", c.kwargs))
			}

			resp, err := client.Chat.Completions.New(ctx, params, opts...)
			if err != nil || len(resp.Choices) != 1 {
				t.Fatalf("chat: %v %+v", err, resp)
			}
			msg := resp.Choices[0].Message
			checkFormatAnswer(t, "non-streamed", resp.Choices[0].FinishReason, msg.Content, msg.ToolCalls,
				rawString(t, msg.JSON.ExtraFields["reasoning_content"].Raw()), resp.RawJSON())

			stream := client.Chat.Completions.NewStreaming(ctx, params, opts...)
			var acc openai.ChatCompletionAccumulator
			var reasoning strings.Builder
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				for _, ch := range chunk.Choices {
					reasoning.WriteString(rawString(t, ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()))
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("stream: choices %+v", acc.Choices)
			}
			m := acc.Choices[0].Message
			checkFormatAnswer(t, "streamed", acc.Choices[0].FinishReason, m.Content, m.ToolCalls, reasoning.String(), "")
		})
	}
}

// rawString decodes a raw JSON string field ("" when absent or null).
func rawString(t *testing.T, raw string) string {
	t.Helper()
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("reasoning_content %s is not a string: %v", raw, err)
	}
	return s
}

// checkFormatAnswer: the scripted answer comes back as reasoning, text
// and one get_weather call with JSON-equal arguments.
func checkFormatAnswer(t *testing.T, how, finish, content string, calls []openai.ChatCompletionMessageToolCall, reasoning, raw string) {
	t.Helper()
	if strings.TrimSpace(reasoning) != "The user wants the weather." {
		t.Errorf("%s: reasoning_content %q (%s)", how, reasoning, raw)
	}
	if strings.TrimSpace(content) != "Let me check." {
		t.Errorf("%s: content %q (%s)", how, content, raw)
	}
	if finish != "tool_calls" || len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].ID == "" {
		t.Fatalf("%s: finish_reason %q, tool_calls %+v (%s)", how, finish, calls, raw)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil || len(args) != 1 || args["city"] != "Paris" {
		t.Errorf("%s: arguments %q (%v)", how, calls[0].Function.Arguments, err)
	}
}
