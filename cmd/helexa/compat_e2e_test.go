package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"

	"github.com/helexa/helexa/internal/fixtures"
)

// TestOpenAIClientsAsTheyReallySend: the OpenAI Go SDK against the real
// daemon with what SDKs, agents and retrieval tools send: content-part
// arrays, store/metadata/reasoning_effort, tool_choice "required" and a
// named function, prompt arrays, token prompts and embeddings.
func TestOpenAIClientsAsTheyReallySend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, _, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	t.Run("content parts and ignored fields", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("Tell me"), openai.TextContentPart("a story."),
			})},
			MaxTokens: openai.Int(6), Temperature: openai.Float(0),
			Store: openai.Bool(false), Metadata: shared.Metadata{"run": "e2e"}, ReasoningEffort: shared.ReasoningEffortLow,
			User: openai.String("tester"), ParallelToolCalls: openai.Bool(false),
		})
		if err != nil || len(resp.Choices) != 1 || resp.Choices[0].Message.Content == "" {
			t.Fatalf("chat with content parts: %v %+v", err, resp)
		}
	})
	t.Run("tool_choice", func(t *testing.T) { checkToolChoice(ctx, t, client, model) })
	t.Run("prompt arrays", func(t *testing.T) {
		comp, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Model:     openai.CompletionNewParamsModel(model),
			Prompt:    openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"Once upon a time", "The dog"}},
			MaxTokens: openai.Int(4), Temperature: openai.Float(0),
		})
		if err != nil || len(comp.Choices) != 2 || comp.Choices[1].Index != 1 || comp.Choices[1].Text == "" {
			t.Fatalf("two prompts: %v %+v", err, comp)
		}
		toks, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Model:     openai.CompletionNewParamsModel(model),
			Prompt:    openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1, 403, 407}},
			MaxTokens: openai.Int(4), Temperature: openai.Float(0),
		})
		if err != nil || len(toks.Choices) != 1 || toks.Usage.PromptTokens != 3 {
			t.Fatalf("a token prompt: %v %+v", err, toks)
		}
	})
	t.Run("embeddings", func(t *testing.T) { checkEmbeddings(ctx, t, client, addr, model) })
}

func checkToolChoice(ctx context.Context, t *testing.T, client openai.Client, model string) {
	tools := []openai.ChatCompletionToolParam{
		{Function: shared.FunctionDefinitionParam{Name: "get_weather", Parameters: shared.FunctionParameters{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}},
		{Function: shared.FunctionDefinitionParam{Name: "get_time", Parameters: shared.FunctionParameters{"type": "object"}}},
	}
	for _, tc := range []struct {
		name   string
		choice openai.ChatCompletionToolChoiceOptionUnionParam
		want   string
	}{
		{"required", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, ""},
		{"named", openai.ChatCompletionToolChoiceOptionUnionParam{OfChatCompletionNamedToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
			Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}}}, "get_time"},
	} {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:      model,
			Messages:   []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What time is it?")},
			Tools:      tools,
			ToolChoice: tc.choice,
			MaxTokens:  openai.Int(48), Temperature: openai.Float(0),
		})
		if err != nil || len(resp.Choices) != 1 {
			t.Fatalf("%s: %v %+v", tc.name, err, resp)
		}
		// The story model rambles inside the call until the budget closes
		// it: a call the budget closed says "length", one the model closed
		// "tool_calls".
		calls, finish := resp.Choices[0].Message.ToolCalls, resp.Choices[0].FinishReason
		if len(calls) != 1 || (finish != "tool_calls" && finish != "length") || !json.Valid([]byte(calls[0].Function.Arguments)) {
			t.Fatalf("%s: want one call with JSON arguments, got %s", tc.name, resp.RawJSON())
		}
		if name := calls[0].Function.Name; (tc.want != "" && name != tc.want) || (name != "get_weather" && name != "get_time") {
			t.Errorf("%s: called %q", tc.name, name)
		}
	}
}

func checkEmbeddings(ctx context.Context, t *testing.T, client openai.Client, addr, model string) {
	inputs := []string{"Once upon a time", "The cat sat"}
	res, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModel(model),
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
	})
	if err != nil || len(res.Data) != 2 || res.Usage.PromptTokens <= 0 {
		t.Fatalf("embeddings: %v %+v", err, res)
	}
	for i, d := range res.Data {
		var ss float64
		for _, x := range d.Embedding {
			ss += x * x
		}
		if d.Index != int64(i) || len(d.Embedding) != 64 || math.Abs(ss-1) > 1e-4 {
			t.Errorf("embedding %d: index %d, %d dims, norm² %v; want 64 unit-length dims", i, d.Index, len(d.Embedding), ss)
		}
	}
	alone, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModel(model), Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String(inputs[1])},
	})
	if err != nil || len(alone.Data) != 1 {
		t.Fatalf("one embedding: %v", err)
	}
	for j, x := range alone.Data[0].Embedding {
		if math.Abs(x-res.Data[1].Embedding[j]) > 1e-5 {
			t.Fatalf("the same input embeds differently alone and in a batch (dim %d: %v vs %v)", j, x, res.Data[1].Embedding[j])
		}
	}
	st, b := rawRequest(t, addr, "POST", "/v1/embeddings", fmt.Sprintf(`{"model":%q,"input":%q,"encoding_format":"base64"}`, model, inputs[1]),
		map[string]string{"Content-Type": "application/json"})
	var out struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if st != 200 || json.Unmarshal([]byte(b), &out) != nil || len(out.Data) != 1 {
		t.Fatalf("base64 embeddings: %d %s", st, b)
	}
	raw, err := base64.StdEncoding.DecodeString(out.Data[0].Embedding)
	if err != nil || len(raw) != 4*64 {
		t.Fatalf("base64 embedding: %v, %d bytes", err, len(raw))
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(raw)); math.Abs(float64(got)-alone.Data[0].Embedding[0]) > 1e-6 {
		t.Errorf("base64 and float encodings differ: %v vs %v", got, alone.Data[0].Embedding[0])
	}
	if !strings.Contains(b, `"object":"embedding"`) {
		t.Errorf("response %s", b)
	}
}
