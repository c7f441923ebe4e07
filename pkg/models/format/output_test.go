package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const weatherTools = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",` +
	`"properties":{"city":{"type":"string"}},"required":["city"]}}},` +
	`{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]`

// parseAll feeds text to a fresh parser in pieces of step bytes (0: whole)
// and joins what comes out.
func parseAll(f Format, o Options, text string, step int) Piece {
	p := f.NewParser(o)
	if step == 0 {
		step = max(len(text), 1)
	}
	var out Piece
	add := func(pc Piece) {
		out.Reasoning += pc.Reasoning
		out.Content += pc.Content
		out.Calls = append(out.Calls, pc.Calls...)
	}
	for i := 0; i < len(text); i += step {
		add(p.Push(text[i:min(len(text), i+step)]))
	}
	add(p.Flush())
	return out
}

// think is a format with <think> reasoning (from the vocabulary) and the
// generic tool-call parser.
func think() Format { return Detect("", func(s string) bool { return s == "<think>" }) }

func TestOutputParser(t *testing.T) {
	tools := json.RawMessage(weatherTools)
	hermes := "<think>need weather</think>I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	paris := []Call{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	cases := []struct {
		name string
		f    Format
		o    Options
		text string
		want Piece
	}{
		{"hermes", think(), Options{Tools: tools}, hermes,
			Piece{Reasoning: "need weather", Content: "I'll check.", Calls: paris}},
		{"llama bare json", think(), Options{Tools: tools}, `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
			Piece{Calls: paris}},
		{"no tools: text stays text", think(), Options{}, hermes,
			Piece{Reasoning: "need weather", Content: "I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}},
		{"cut off inside a call", think(), Options{Tools: tools}, `<tool_call>{"name": "get_weather", "argu`,
			Piece{Content: `<tool_call>{"name": "get_weather", "argu`}},
		{"prompt opened reasoning", think(), Options{Prompt: "user: hi\nassistant: <think>\n"}, "hmm</think>Hello",
			Piece{Reasoning: "hmm", Content: "Hello"}},
		{"no reasoning in JSON mode", think(), Options{NoReasoning: true}, "<think>x</think>{}",
			Piece{Content: "<think>x</think>{}"}},
		{"no reasoning format", Detect("", nil), Options{}, "<think>x</think>y", Piece{Content: "<think>x</think>y"}},
		{"required", think(), Options{Tools: tools, Choice: Choice{Required: true}}, `{"name":"get_time","arguments":{"tz":"UTC"}}`,
			Piece{Calls: []Call{{Name: "get_time", Arguments: `{"tz":"UTC"}`}}}},
		{"required, arguments as a string", think(), Options{Tools: tools, Choice: Choice{Required: true}}, `{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}`,
			Piece{Calls: []Call{{Name: "get_time", Arguments: `{"tz":"UTC"}`}}}},
		{"required, bare arguments go to the first tool", think(), Options{Tools: tools, Choice: Choice{Required: true}}, `{"city":"Oslo"}`,
			Piece{Calls: []Call{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}}},
		{"named", think(), Options{Tools: tools, Choice: Choice{Required: true, Name: "get_weather"}}, `{"city":"Oslo"}`,
			Piece{Calls: []Call{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}}},
		{"required, cut short", think(), Options{Tools: tools, Choice: Choice{Required: true}}, `{"name":"get_ti`,
			Piece{Content: `{"name":"get_ti`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, step := range []int{0, 1, 3} {
				if got := parseAll(c.f, c.o, c.text, step); !reflect.DeepEqual(got, c.want) {
					t.Errorf("step %d: %+v, want %+v", step, got, c.want)
				}
			}
		})
	}
}

// TestOutputParserFamilies: models served with the Mistral (Ministral
// reasoning) and the DeepSeek R1 template, whose generation writes
// reasoning and two calls in the family's own syntax, give the reasoning
// apart and two structured calls, whatever the split.
func TestOutputParserFamilies(t *testing.T) {
	cases := []struct{ template, prompt, text string }{
		{"mistralai-Ministral-3-14B-Reasoning-2512.jinja", "",
			`[THINK]The user wants weather and museums.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"query": "museums"}`},
		{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "",
			"<think>\nThe user wants weather and museums.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n" +
				"<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"museums\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
		// The generation prompt opened <think>: generation starts in reasoning.
		{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "<｜Assistant｜><think>\n",
			"The user wants weather and museums.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n" +
				"<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"museums\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},` +
		`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}]`)
	want := Piece{Reasoning: "The user wants weather and museums.", Calls: []Call{
		{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "search", Arguments: `{"query":"museums"}`}}}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusTemplates, c.template))
			if err != nil {
				t.Fatal(err)
			}
			f := Detect(string(src), nil)
			if f.Reasoning == nil || f.Tools == nil {
				t.Fatalf("Detect = %+v: want a reasoning format and a tool-call family", f)
			}
			for _, step := range []int{0, 1, 3} {
				if got := parseAll(f, Options{Prompt: c.prompt, Tools: tools}, c.text, step); !reflect.DeepEqual(got, want) {
					t.Errorf("step %d: %+v, want %+v", step, got, want)
				}
			}
		})
	}
}

func TestFormatMarkers(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusTemplates, "mistralai-Ministral-3-14B-Reasoning-2512.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	f := Detect(string(src), nil)
	if got, want := f.ReasoningMarkers(), []string{"[THINK]", "[/THINK]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("reasoning markers %q, want %q", got, want)
	}
	if got := f.ToolMarkers(); len(got) == 0 || got[0] != "[TOOL_CALLS]" {
		t.Errorf("tool markers %q, want [TOOL_CALLS] first", got)
	}
	if none := Detect("", nil); none.ReasoningMarkers() != nil || none.ToolMarkers() != nil {
		t.Errorf("a format without markers has %q %q", none.ReasoningMarkers(), none.ToolMarkers())
	}
}
