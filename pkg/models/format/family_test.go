package format

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/models/chat"
)

// corpusTemplates is the template corpus of pkg/models/chat (llama.cpp's
// models/templates/ at commit 3f545bec).
const corpusTemplates = "../chat/testdata/corpus/templates"

const roundTripTools = `[
 {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object",
   "properties": {"location": {"type": "object", "properties": {"city": {"type": "string"}}}, "unit": {"type": "string"}}, "required": ["location"]}}},
 {"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {"type": "object",
   "properties": {"query": {"type": "string"}, "filters": {"type": "array", "items": {"type": "string"}}}, "required": ["query"]}}}]`

var roundTripCalls = []Call{
	{ID: "call0A1b2", Name: "get_weather", Arguments: `{"location":{"city":"Paris"},"unit":"celsius"}`},
	{ID: "call3C4d5", Name: "search", Arguments: `{"query":"museums in Paris","filters":["open now"]}`},
}

// How the assistant turn carries its calls: as tool_calls with object
// arguments, with JSON-string arguments (templates that concatenate them,
// Functionary v3.2), or written in its content in the model's own syntax
// (templates that render only content, Granite 3.x: "<|tool_call|>" and a
// JSON list).
const (
	argsObject = iota
	argsString
	callsInContent
)

// roundTripMessages: a user turn, an assistant turn with text and two
// parallel calls, and their results.
func roundTripMessages(t *testing.T, withAssistant bool, style int) json.RawMessage {
	t.Helper()
	msgs := []any{map[string]any{"role": "user", "content": "Weather in Paris and search for museums."}}
	if withAssistant {
		var calls, list []any
		for _, c := range roundTripCalls {
			var args any = json.RawMessage(c.Arguments)
			if style == argsString {
				args = c.Arguments
			}
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": args}})
			list = append(list, map[string]any{"name": c.Name, "arguments": json.RawMessage(c.Arguments)})
		}
		assistant := map[string]any{"role": "assistant", "content": "Let me check.", "tool_calls": calls}
		if style == callsInContent {
			raw, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			assistant = map[string]any{"role": "assistant", "content": "Let me check.<|tool_call|>" + string(raw)}
		}
		msgs = append(msgs,
			assistant,
			map[string]any{"role": "tool", "tool_call_id": "call0A1b2", "name": "get_weather", "content": "sunny"},
			map[string]any{"role": "tool", "tool_call_id": "call3C4d5", "name": "search", "content": "Louvre"})
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestFamilyRoundTrip renders an assistant tool-call turn through each
// family's real template, feeds the assistant part to the parser chosen
// from that template (whole, and one byte at a time), and expects the same
// calls back.
func TestFamilyRoundTrip(t *testing.T) {
	cases := []struct {
		family, template string
		cut              []string // the assistant part ends before the first of these
		content          bool     // the template renders the assistant's text
		ids              string   // "": the format has no ids; "given": the messages' ids; else withIDs' family
		style            int      // argsObject, argsString or callsInContent
	}{
		{"mistral", "mistralai-Mistral-Nemo-Instruct-2407.jinja", []string{"</s>"}, false, "given", argsObject},
		{"mistral", "Mistral-Small-3.2-24B-Instruct-2506.jinja", []string{"</s>"}, true, "given", argsObject},
		{"mistral", "unsloth-mistral-Devstral-Small-2507.jinja", []string{"</s>"}, true, "", argsObject},
		{"mistral", "mistralai-Ministral-3-14B-Reasoning-2512.jinja", []string{"</s>"}, true, "", argsObject},
		{"deepseek", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", []string{"<｜end▁of▁sentence｜>"}, true, "", argsObject},
		{"deepseek", "deepseek-ai-DeepSeek-V3.1.jinja", []string{"<｜end▁of▁sentence｜>"}, true, "", argsObject},
		{"command-r7b", "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", []string{"<|END_OF_TURN_TOKEN|>"}, true, "command-r7b", argsObject},
		{"nemotron-v2", "NVIDIA-Nemotron-Nano-v2.jinja", []string{"<SPECIAL_12>"}, true, "", argsObject},
		{"kimi-k2", "moonshotai-Kimi-K2.jinja", []string{"<|im_end|>"}, true, "kimi-k2", argsObject},
		{"glm-4.5", "GLM-4.6.jinja", []string{"<|observation|>"}, true, "", argsObject},
		{"glm-4.5", "GLM-4.7-Flash.jinja", []string{"<|observation|>"}, true, "", argsObject},
		{"minimax-m2", "MiniMax-M2.jinja", []string{"[e~["}, true, "", argsObject},
		{"seed-oss", "ByteDance-Seed-OSS.jinja", []string{"<seed:eos>"}, true, "", argsObject},
		{"apertus", "Apertus-8B-Instruct.jinja", []string{"[sunny"}, true, "", argsObject},
		{"functionary-v3.1", "meetkai-functionary-medium-v3.1.jinja", []string{"<|eom_id|>"}, true, "", argsObject},
		{"deepseek-v3.2", "deepseek-ai-DeepSeek-V3.2.jinja", []string{"<｜end▁of▁sentence｜>"}, true, "", argsObject},
		{"deepseek-v4", "deepseek-ai-DeepSeek-V4.jinja", []string{"<｜end▁of▁sentence｜>"}, true, "", argsObject},
		{"lfm2", "LFM2.5-8B-A1B.jinja", []string{"<|im_end|>"}, true, "", argsObject},
		{"tool-calls-list", "unsloth-Apriel-1.5.jinja", []string{"<|end|>"}, true, "given", argsObject},
		{"tool-calls-list", "MiniMax-M1.jinja", []string{"<end_of_sentence>"}, true, "", argsObject},
		{"command-r7b", "Cohere2MoE.jinja", []string{"<|END_OF_TURN_TOKEN|>"}, true, "command-r7b", argsObject},
		{"glm-4.5", "poolside-Laguna-XS.2.jinja", []string{"</assistant>"}, true, "", argsObject},
		{"tool-calls-list", "Apriel-1.6-15b-Thinker-fixed.jinja", []string{"<|end|>"}, true, "given", argsObject},
		{"deepseek-v4", "deepseek-ai-DeepSeek-V4-Flash-0731.jinja", []string{"<｜end▁of▁sentence｜>"}, true, "", argsObject},
		{"firefunction-v2", "fireworks-ai-llama-3-firefunction-v2.jinja", []string{"<|eot_id|>"}, true, "", argsObject},
		{"functionary-v3.2", "meetkai-functionary-medium-v3.2.jinja", []string{"<|eot_id|>"}, true, "", argsString},
		{"granite", "ibm-granite-granite-3.3-2B-Instruct.jinja", []string{"<|end_of_text|>"}, true, "", callsInContent},
		{"", "ibm-granite-granite-4.0.jinja", []string{"<|end_of_text|>"}, true, "", argsObject},
		{"", "Qwen-Qwen3-0.6B.jinja", []string{"<|im_end|>"}, true, "", argsObject},
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusTemplates, c.template))
			if err != nil {
				t.Fatal(err)
			}
			if f := DetectFamily(string(src)); f == nil && c.family != "" || f != nil && f.Name != c.family {
				t.Fatalf("DetectFamily = %v, want %q", f, c.family)
			}
			text := assistantPart(t, string(src), c.cut, c.style)
			want := withoutIDs(roundTripCalls)
			switch c.ids {
			case "given":
				want = roundTripCalls
			case "command-r7b", "kimi-k2":
				want = withIDs(roundTripCalls, c.ids)
			}
			wantContent := ""
			if c.content && strings.Contains(text, "Let me check.") {
				wantContent = "Let me check."
			}
			for _, split := range []int{0, 1} {
				p := NewStream(string(src), json.RawMessage(roundTripTools))
				content, calls := feed(p, text, split)
				if strings.TrimSpace(content) != wantContent {
					t.Errorf("split %d: content %q, want %q (text %q)", split, content, wantContent, text)
				}
				if !sameCalls(calls, want) {
					t.Errorf("split %d: calls %+v, want %+v (text %q)", split, calls, want, text)
				}
			}
		})
	}
}

// assistantPart renders the conversation with and without the assistant
// turn and returns what the assistant wrote, up to the first cut string.
func assistantPart(t *testing.T, src string, cut []string, style int) string {
	t.Helper()
	tpl, err := chat.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	// FireFunction v2's template reads the tools from a "functions" string
	// and the date from "datetime".
	kw := map[string]any{"bos_token": "<s>", "eos_token": "</s>", "functions": roundTripTools, "datetime": "2025-07-26"}
	render := func(full bool) string {
		out, err := tpl.Render(context.Background(), chat.Input{Messages: roundTripMessages(t, full, style),
			Tools: json.RawMessage(roundTripTools), AddGenerationPrompt: !full, Kwargs: kw})
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		return out
	}
	prompt, full := render(false), render(true)
	n := 0
	for n < len(prompt) && n < len(full) && prompt[n] == full[n] {
		n++
	}
	if i := strings.LastIndexByte(full[:n], '<'); i >= 0 && !strings.Contains(full[i:n], ">") {
		n = i // do not split a tag
	}
	if tail := prompt[n:]; tail != "" {
		t.Logf("generation prompt ends differently: %q (turn: %q)", tail, full[n:min(len(full), n+40)])
	}
	// An empty think block the template writes before the calls is
	// reasoning, the think splitter's business.
	text := emptyThink.ReplaceAllString(full[n:], "")
	for _, c := range cut {
		if i := strings.Index(text, c); i >= 0 {
			text = text[:i]
		}
	}
	return text
}

var emptyThink = regexp.MustCompile(`^\s*(<think>\s*</think>|</think>)\s*`)

func feed(p Stream, text string, split int) (string, []Call) {
	var content strings.Builder
	var calls []Call
	if split == 0 {
		s, cs := p.Push(text)
		content.WriteString(s)
		calls = append(calls, cs...)
	} else {
		for i := 0; i < len(text); i++ {
			s, cs := p.Push(text[i : i+1])
			content.WriteString(s)
			calls = append(calls, cs...)
		}
	}
	s, cs := p.Flush()
	content.WriteString(s)
	return content.String(), append(calls, cs...)
}

func withoutIDs(cs []Call) []Call {
	out := append([]Call(nil), cs...)
	for i := range out {
		out[i].ID = ""
	}
	return out
}

// withIDs gives the ids the format writes itself: Command R7B numbers the
// calls, Kimi K2 writes functions.NAME:INDEX.
func withIDs(cs []Call, family string) []Call {
	out := append([]Call(nil), cs...)
	for i := range out {
		switch family {
		case "command-r7b":
			out[i].ID = []string{"0", "1"}[i]
		case "kimi-k2":
			out[i].ID = "functions." + out[i].Name + ":" + []string{"0", "1"}[i]
		}
	}
	return out
}

func sameCalls(got, want []Call) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		var a, b any
		if json.Unmarshal([]byte(got[i].Arguments), &a) != nil || json.Unmarshal([]byte(want[i].Arguments), &b) != nil {
			return false
		}
		if got[i].Name != want[i].Name || got[i].ID != want[i].ID || !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

// TestFamilyParserText: text before and after sections stays content, a
// section that does not decode is content unchanged, and a marker cut
// across pushes is held back.
func TestFamilyParserText(t *testing.T) {
	fam := map[string]*Family{}
	for _, f := range Families() {
		fam[f.Name] = f
	}
	cases := []struct {
		name, family, text, content string
		calls                       int
	}{
		{"text after", "nemotron-v2", `Sure. <TOOLCALL>[{"name": "f", "arguments": {"a": 1}}]</TOOLCALL> Done.`, "Sure.Done.", 1}, // whitespace around calls is dropped, as in Parser
		{"no call", "nemotron-v2", "plain answer with <TOOL words", "plain answer with <TOOL words", 0},
		{"bad section", "nemotron-v2", "x <TOOLCALL>not json</TOOLCALL>", "x <TOOLCALL>not json</TOOLCALL>", 0},
		{"unterminated section decodes at flush", "kimi-k2", `<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>`, "", 1},
		{"mistral to end of text", "mistral", `[TOOL_CALLS]f[ARGS]{"a": "b"}`, "", 1},
		{"seed python literal", "seed-oss", "<seed:tool_call><function=f><parameter=p>{'k': [1, True, None]}</parameter></function></seed:tool_call>", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, split := range []int{0, 1} {
				content, calls := feed(NewFamilyParser(fam[c.family], nil), c.text, split)
				if content != c.content || len(calls) != c.calls {
					t.Errorf("split %d: content %q, %d calls (%+v); want %q, %d", split, content, len(calls), calls, c.content, c.calls)
				}
			}
		})
	}
}

// TestHarmonyRoundTrip: GPT-OSS writes one call per turn, in a harmony
// message addressed to the function; the reasoning splitter passes it on
// and the harmony parser reads it back, whole and byte by byte.
func TestHarmonyRoundTrip(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusTemplates, "openai-gpt-oss-120b.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	if f := DetectFamily(string(src)); f == nil || f.Name != "harmony" {
		t.Fatalf("DetectFamily = %v, want harmony", f)
	}
	r, ok := DetectReasoning(string(src), nil)
	if !ok || r.Name != "harmony" {
		t.Fatalf("DetectReasoning = %q", r.Name)
	}
	tpl, err := chat.Compile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	msgs := func(full bool) json.RawMessage {
		m := `[{"role":"user","content":"Weather in Paris?"}`
		if full {
			m += `,{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":{"location":{"city":"Paris"}}}}]},
			{"role":"tool","tool_call_id":"c1","content":"sunny"}`
		}
		return json.RawMessage(m + "]")
	}
	render := func(full bool) string {
		out, err := tpl.Render(context.Background(), chat.Input{Messages: msgs(full), Tools: json.RawMessage(roundTripTools), AddGenerationPrompt: !full})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	prompt, full := render(false), render(true)
	if !strings.HasPrefix(full, prompt) {
		t.Fatalf("prompt %q is not a prefix of %q", prompt, full)
	}
	text, _, _ := strings.Cut(full[len(prompt):], "<|call|>") // <|call|> ends generation
	want := []Call{{Name: "get_weather", Arguments: `{"location":{"city":"Paris"}}`}}
	for _, step := range []int{len(text), 1} {
		sp := r.NewSplitter(false)
		p := NewStream(string(src), json.RawMessage(roundTripTools))
		var content strings.Builder
		var calls []Call
		push := func(c string) {
			s, cs := p.Push(c)
			content.WriteString(s)
			calls = append(calls, cs...)
		}
		for i := 0; i < len(text); i += step {
			_, c := sp.Push(text[i:min(len(text), i+step)])
			push(c)
		}
		_, c := sp.Flush()
		push(c)
		s, cs := p.Flush()
		content.WriteString(s)
		calls = append(calls, cs...)
		if content.String() != "" || !sameCalls(calls, want) {
			t.Errorf("step %d: content %q calls %+v (text %q)", step, content.String(), calls, text)
		}
	}
}

// TestFunctionaryV32Text: ">>>all" sections are content, text that is not
// a recipient line is content, and python takes raw code.
func TestFunctionaryV32Text(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusTemplates, "meetkai-functionary-medium-v3.2.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, text, content string
		calls               []Call
	}{
		{"content only", "all\nHello, world!", "Hello, world!", nil},
		{"no recipient", "Hello there, world", "Hello there, world", nil},
		{"content then call", "all\nChecking.>>>get_weather\n{\"location\": {\"city\": \"Oslo\"}}", "Checking.",
			[]Call{{Name: "get_weather", Arguments: `{"location":{"city":"Oslo"}}`}}},
		{"python code", "python\nprint(1)", "", []Call{{Name: "python", Arguments: `{"code":"print(1)"}`}}},
		{"bad arguments", "get_weather\nnot json", "get_weather\nnot json", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, split := range []int{0, 1} {
				content, calls := feed(NewStream(string(src), json.RawMessage(roundTripTools)), c.text, split)
				if content != c.content || !sameCalls(calls, c.calls) {
					t.Errorf("split %d: content %q calls %+v; want %q %+v", split, content, calls, c.content, c.calls)
				}
			}
		})
	}
}
