package loader

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/chat"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// turn is what one chat request streamed to its caller.
type turn struct {
	Reasoning, Content string
	ToolCalls          []engine.ToolCall
	Finish             string
}

// collect runs a chat request on svc and joins its deltas.
func collect(t *testing.T, svc engine.Service, req engine.ChatRequest) turn {
	t.Helper()
	var out turn
	res, err := svc.Chat(context.Background(), req, func(d engine.Delta) error {
		out.Reasoning += d.Reasoning
		out.Content += d.Content
		out.ToolCalls = append(out.ToolCalls, d.ToolCalls...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.Finish = res.FinishReason
	return out
}

// withoutMadeUpIDs blanks the call ids the engine made up (random per
// request), checking that every call has one.
func withoutMadeUpIDs(t *testing.T, how string, tr turn) turn {
	t.Helper()
	var calls []engine.ToolCall
	for i, c := range tr.ToolCalls {
		if c.ID == "" {
			t.Errorf("%s: call %d has no id", how, i)
		}
		if strings.HasPrefix(c.ID, "call_") {
			c.ID = ""
		}
		calls = append(calls, c)
	}
	tr.ToolCalls = calls
	return tr
}

// TestManagerAndClientAgree: for a model whose (scripted) output holds
// tool-call markup in its family's syntax, the in-process Manager and
// api.Client (through a real api.Server over HTTP on the same Manager)
// return the same structured turn: reasoning, content, tool calls and
// finish reason; a required call (tool_choice) too.
func TestManagerAndClientAgree(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
		`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}]`)
	twoCalls := []engine.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "search", Arguments: `{"query":"museums"}`}}
	cases := []struct {
		name, template, text string
		choice               engine.ToolChoice
		want                 turn
	}{
		{"qwen3 hermes", "Qwen-Qwen3-0.6B.jinja",
			"<think>\nWeather first.\n</think>\n\nLet me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"museums\"}}\n</tool_call>",
			engine.ToolChoice{}, turn{Reasoning: "Weather first.", Content: "Let me look.", ToolCalls: twoCalls, Finish: "tool_calls"}},
		{"ministral", "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
			`[THINK]Weather first.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"query": "museums"}`,
			engine.ToolChoice{}, turn{Reasoning: "Weather first.", ToolCalls: twoCalls, Finish: "tool_calls"}},
		{"qwen3 no call", "Qwen-Qwen3-0.6B.jinja", "<think>\nEasy.\n</think>\n\nIt is sunny.",
			engine.ToolChoice{}, turn{Reasoning: "Easy.", Content: "It is sunny.", Finish: "stop"}},
		{"required call", "Qwen-Qwen3-0.6B.jinja", `{"city": "Oslo"}`,
			engine.ToolChoice{Required: true, Name: "get_weather"},
			turn{ToolCalls: []engine.ToolCall{{Name: "get_weather", Arguments: `{"city": "Oslo"}`}}, Finish: "tool_calls"}},
	}
	tok := qwen3Tokenizer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mgr, client, _ := scriptedStack(t, tok, c.template, c.text)
			req := engine.ChatRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user","content":"Weather in Paris, and museums?"}]`),
				Tools: tools, ToolChoice: c.choice, TemplateKwargs: map[string]any{"enable_thinking": true}}
			in := withoutMadeUpIDs(t, "manager", collect(t, mgr, req))
			over := withoutMadeUpIDs(t, "client", collect(t, client, req))
			if !reflect.DeepEqual(in, c.want) {
				t.Errorf("manager: %+v\nwant     %+v", in, c.want)
			}
			if !reflect.DeepEqual(over, in) {
				t.Errorf("client:  %+v\nmanager: %+v", over, in)
			}
		})
	}
}

// scriptedStack serves a model with the corpus template whose executor
// generates text: the Manager, and a Client of an api.Server over it.
func scriptedStack(t *testing.T, tok *tokenizer.Tokenizer, template, text string) (*engine.Manager, *api.Client, string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "models", "chat", "testdata", "corpus", "templates", template))
	if err != nil {
		t.Fatal(err)
	}
	script, err := tok.Encode(text, false, false)
	if err != nil {
		t.Fatal(err)
	}
	ex := &scriptExec{script: script, eos: tok.EOS(), pos: map[executor.SeqID]int{},
		info: executor.Info{Arch: "script", NCtx: 4096, NCtxTrain: 4096, NVocab: tok.VocabSize(), BlockSize: 16, NumBlocks: 512, BlockBytes: 1024, Processor: "CPU"}}
	m := &engine.Model{Executor: ex, Tokenizer: newEngineTokenizer(tok)}
	tpl, err := chat.Compile(string(src))
	setChat(m, tpl, err, tok, template, slog.New(slog.DiscardHandler))
	cfg := engine.DefaultConfig()
	cfg.NumCtx, cfg.KeepAlive = 4096, -1
	mgr := engine.NewManager(cfg, modelLoader{m}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	srv, err := api.NewServer(api.Config{Service: mgr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	client, err := api.NewClient(ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return mgr, client, ts.URL
}

func qwen3Tokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", "vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestToolChoiceThroughTheStack: "required" and a named function force a
// call over HTTP: the answer (constrained to one JSON object) comes back
// as tool_calls with finish_reason tool_calls, streamed and not; a named
// function that is not among the tools is a 400.
func TestToolChoiceThroughTheStack(t *testing.T) {
	const twoTools = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
		`{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]`
	tok := qwen3Tokenizer(t)
	for _, tc := range []struct {
		name, choice, answer, wantName, wantArgs string
		stream                                   bool
	}{
		{"required", `"required"`, `{"name":"get_time","arguments":{"tz":"UTC"}}`, "get_time", `{"tz":"UTC"}`, false},
		{"required, streamed", `"required"`, `{"name":"get_weather","arguments":{"city":"Paris"}}`, "get_weather", `{"city":"Paris"}`, true},
		{"named", `{"type":"function","function":{"name":"get_weather"}}`, `{"city":"Oslo"}`, "get_weather", `{"city":"Oslo"}`, false},
		{"named, streamed", `{"type":"function","function":{"name":"get_weather"}}`, `{"city":"Rome"}`, "get_weather", `{"city":"Rome"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, url := scriptedStack(t, tok, "Qwen-Qwen3-0.6B.jinja", tc.answer)
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools +
				`,"tool_choice":` + tc.choice + fmt.Sprintf(`,"stream":%v}`, tc.stream)
			st, out := postJSON(t, url+"/v1/chat/completions", body)
			if st != http.StatusOK {
				t.Fatalf("%d %s", st, out)
			}
			want := fmt.Sprintf(`"name":%q,"arguments":%q`, tc.wantName, tc.wantArgs)
			if !strings.Contains(out, want) || !strings.Contains(out, `"finish_reason":"tool_calls"`) {
				t.Errorf("answer %s\nwant a tool call with %s and finish_reason tool_calls", out, want)
			}
		})
	}
	_, _, url := scriptedStack(t, tok, "Qwen-Qwen3-0.6B.jinja", `{}`)
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + twoTools + `,"tool_choice":{"type":"function","function":{"name":"nope"}}}`
	if st, out := postJSON(t, url+"/v1/chat/completions", body); st != http.StatusBadRequest || !strings.Contains(out, "nope") {
		t.Errorf("a named tool that is not in tools: %d %s", st, out)
	}
}

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
