package loader

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/sampling"
)

// scriptExec is an executor that "samples" a fixed token script, then EOS:
// a scripted generation for end-to-end tests of what surrounds the model.
type scriptExec struct {
	mu     sync.Mutex
	info   executor.Info
	script []int32
	eos    int32
	pos    map[executor.SeqID]int
	next   executor.SeqID
}

func (s *scriptExec) Info() executor.Info { return s.info }
func (s *scriptExec) NewSeq(sampling.Params) (executor.SeqID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.pos[s.next] = 0
	return s.next, nil
}
func (s *scriptExec) FreeSeq(id executor.SeqID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pos, id)
}
func (s *scriptExec) Step(_ context.Context, batch []executor.Work) ([]executor.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]executor.Result, len(batch))
	for i, w := range batch {
		out[i] = executor.Result{Seq: w.Seq, Token: s.eos}
		if !w.Sample {
			continue
		}
		if k := s.pos[w.Seq]; k < len(s.script) {
			out[i].Token = s.script[k]
			s.pos[w.Seq] = k + 1
		}
	}
	return out, nil
}
func (s *scriptExec) Memory() executor.MemoryInfo { return executor.MemoryInfo{FreeBytes: 1 << 30} }
func (s *scriptExec) Close() error                { return nil }

type modelLoader struct{ m *engine.Model }

func (l modelLoader) Load(context.Context, string, engine.LoadOptions) (*engine.Model, error) {
	return l.m, nil
}

// TestFamilyFormatsThroughTheStack: the runner (reasoning splitter chosen
// from the template), the API (tool-call format chosen from the template)
// and the OpenAI Go SDK, over a model whose executor replays a scripted
// generation: with the Mistral (Ministral reasoning) and the DeepSeek R1
// template, tool_calls and reasoning_content come back, streamed and not.
func TestFamilyFormatsThroughTheStack(t *testing.T) {
	cases := []struct{ template, text string }{
		{"mistralai-Ministral-3-14B-Reasoning-2512.jinja",
			`[THINK]The user wants weather and museums.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"query": "museums"}`},
		// With enable_thinking this R1 template's generation prompt opens
		// <think>: generation starts in reasoning.
		{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
			"The user wants weather and museums.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n" +
				"<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"museums\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	}
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", "vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "..", "models", "chat", "testdata", "corpus", "templates", c.template))
			if err != nil {
				t.Fatal(err)
			}
			script, err := tok.Encode(c.text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			ex := &scriptExec{script: script, eos: tok.EOS(), pos: map[executor.SeqID]int{},
				info: executor.Info{Arch: "script", NCtx: 4096, NCtxTrain: 4096, NVocab: tok.VocabSize(), BlockSize: 16, NumBlocks: 512, BlockBytes: 1024, Processor: "CPU"}}
			m := &engine.Model{Executor: ex, Tokenizer: newEngineTokenizer(tok)}
			tpl, err := chat.Compile(string(src))
			setChat(m, tpl, err, tok, c.template, slog.New(slog.DiscardHandler))
			cfg := engine.DefaultConfig()
			cfg.NumCtx, cfg.KeepAlive = 4096, -1
			mgr := engine.NewManager(cfg, modelLoader{m}, nil)
			t.Cleanup(func() { _ = mgr.Close(context.Background()) })
			srv, err := api.NewServer(api.Config{Service: mgr, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(ts.Close)
			checkFamilyThroughSDK(t, ts.URL)
		})
	}
}

func checkFamilyThroughSDK(t *testing.T, url string) {
	client := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0),
		option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": true}))
	params := openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris, and museums?")},
		Tools: []openai.ChatCompletionToolParam{
			{Function: openai.FunctionDefinitionParam{Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}}},
			{Function: openai.FunctionDefinitionParam{Name: "search", Parameters: openai.FunctionParameters{"type": "object"}}},
		},
		Temperature: openai.Float(0),
	}
	const reasoning = "The user wants weather and museums."
	check := func(how string, msg openai.ChatCompletionMessage, finish, gotReasoning string) {
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
		if gotReasoning != reasoning {
			t.Errorf("%s: reasoning_content %q", how, gotReasoning)
		}
	}
	ctx := context.Background()
	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	raw := full.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw()
	check("non-streaming", full.Choices[0].Message, full.Choices[0].FinishReason, unquote(raw))

	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	streamed := ""
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 {
			streamed += unquote(ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"].Raw())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	check("streaming", acc.Choices[0].Message, acc.Choices[0].FinishReason, streamed)
}

// unquote decodes a raw JSON string field ("" when absent or null).
func unquote(raw string) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return ""
	}
	return s
}
