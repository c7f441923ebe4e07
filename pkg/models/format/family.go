package format

import (
	"encoding/json"
	"strings"
)

// Stream is the incremental contract every tool-call parser keeps: Push
// takes any split of the generated text, Flush ends it, and the
// concatenated results are the same for every split.
type Stream interface {
	Push(text string) (string, []Call)
	Flush() (string, []Call)
	Calls() int
}

// Family is one model family's tool-call syntax: calls sit in sections
// opened by Begin and closed by End (End "" runs to the end of the text),
// and Decode turns a section's body into calls.
type Family struct {
	// Name identifies the family in logs and docs ("mistral", "deepseek", ...).
	Name string
	// Begin opens a tool-call section; End closes it ("" = end of text).
	Begin, End string
	// Detect are strings that, all present in a chat template, select this
	// family.
	Detect []string
	// IDs reports whether the format carries call ids.
	IDs bool
	// inner are markers inside a section (DeepSeek's and Kimi's per-call
	// delimiters).
	inner []string
	// decode parses a section body.
	decode func(body string, tools toolSet) ([]Call, bool)
	// stream, when set, is the family's own incremental parser (formats
	// that are not Begin…End sections, such as Functionary v3.2's
	// recipient sections).
	stream func(tools toolSet) Stream
}

// Markers are the texts the parser must see: a runner renders them even
// when the vocabulary has them as control tokens.
func (f *Family) Markers() []string {
	out := []string{f.Begin}
	if f.End != "" {
		out = append(out, f.End)
	}
	return append(out, f.inner...)
}

// Families lists the formats chosen by template, in detection order (the
// first whose markers all appear in the template wins). Templates matching
// none use the generic Parser (Hermes/Qwen <tool_call>, Llama 3.x JSON and
// <|python_tag|>, a bare Mistral-style list).
func Families() []*Family {
	return []*Family{
		{Name: "mistral", Begin: "[TOOL_CALLS]", Detect: []string{"[TOOL_CALLS]"}, IDs: true, inner: []string{"[ARGS]", "[CALL_ID]"}, decode: decodeMistral},
		{Name: "deepseek-v3.2", Begin: "<｜DSML｜function_calls>", End: "</｜DSML｜function_calls>", Detect: []string{"｜DSML｜", "function_calls>"}, decode: decodeDSML},
		{Name: "deepseek-v4", Begin: "<｜DSML｜tool_calls>", End: "</｜DSML｜tool_calls>", Detect: []string{"｜DSML｜", "tool_calls>"}, decode: decodeDSML},
		{Name: "deepseek", Begin: "<｜tool▁calls▁begin｜>", End: "<｜tool▁calls▁end｜>", Detect: []string{"<｜tool▁calls▁begin｜>"}, inner: []string{dsCallBegin, dsCallEnd, dsSep}, decode: decodeDeepSeek},
		{Name: "command-r7b", Begin: "<|START_ACTION|>", End: "<|END_ACTION|>", Detect: []string{"<|START_ACTION|>"}, IDs: true, decode: decodeCommandR},
		{Name: "granite", Begin: "<|tool_call|>", Detect: []string{"<|tool_call|>"}, decode: decodeJSONList},
		{Name: "nemotron-v2", Begin: "<TOOLCALL>", End: "</TOOLCALL>", Detect: []string{"<TOOLCALL>"}, decode: decodeJSONList},
		{Name: "kimi-k2", Begin: "<|tool_calls_section_begin|>", End: "<|tool_calls_section_end|>", Detect: []string{"<|tool_calls_section_begin|>"}, IDs: true, inner: []string{kimiCallBegin, kimiCallEnd, kimiArgs}, decode: decodeKimi},
		{Name: "glm-4.5", Begin: "<tool_call>", End: "</tool_call>", Detect: []string{"<arg_key>"}, inner: []string{"<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"}, decode: decodeGLM},
		{Name: "minimax-m2", Begin: "<minimax:tool_call>", End: "</minimax:tool_call>", Detect: []string{"<minimax:tool_call>"}, decode: decodeMiniMax},
		{Name: "seed-oss", Begin: "<seed:tool_call>", End: "</seed:tool_call>", Detect: []string{"<seed:tool_call>"}, decode: decodeSeed},
		{Name: "apertus", Begin: "<|tools_prefix|>", End: "<|tools_suffix|>", Detect: []string{"<|tools_prefix|>"}, decode: decodeApertus},
		{Name: "lfm2", Begin: "<|tool_call_start|>", End: "<|tool_call_end|>", Detect: []string{"<|tool_call_start|>"}, decode: decodePythonic},
		{Name: "tool-calls-list", Begin: "<tool_calls>", End: "</tool_calls>", Detect: []string{"<tool_calls>"}, IDs: true, decode: decodeCallList},
		{Name: "firefunction-v2", Begin: "functools[", Detect: []string{"functools["}, decode: decodeFireFunction},
		{Name: "harmony", Begin: harmonyRecipient, Detect: []string{"<|channel|>", " to="}, decode: decodeHarmony},
		{Name: "functionary-v3.2", Begin: recipientMarker, Detect: []string{">>>all", ">>>${recipient}"}, stream: newFunctionaryV32},
		{Name: "functionary-v3.1", Begin: "<function=", End: "</function>", Detect: []string{"<function=", "<|eom_id|>"}, decode: decodeFunctionary},
	}
}

// DetectFamily picks the tool-call family of a chat template from the
// markers it writes (as llama.cpp's common_chat_templates_init does); nil
// means the generic Parser.
func DetectFamily(template string) *Family {
	for _, f := range Families() {
		all := true
		for _, d := range f.Detect {
			all = all && strings.Contains(template, d)
		}
		if all {
			return f
		}
	}
	return nil
}

// NewStream returns the parser for a model whose chat template is
// template: its family's when DetectFamily finds one, else the generic
// Parser.
func NewStream(template string, tools json.RawMessage) Stream {
	return DetectFamily(template).newStream(tools)
}

// newStream returns f's parser; a nil f is the generic Parser.
func (f *Family) newStream(tools json.RawMessage) Stream {
	switch {
	case f == nil:
		return NewParser(tools)
	case f.stream != nil:
		return f.stream(parseTools(tools))
	}
	return NewFamilyParser(f, tools)
}

// FamilyParser is the incremental parser of one Family: text outside
// sections is content (whitespace around calls dropped); a section whose
// body does not decode is returned as content, unchanged.
type FamilyParser struct {
	f     *Family
	tools toolSet
	in    bool   // inside a section
	pend  string // undecided text
	spacing
	calls int
}

// NewFamilyParser returns a parser for f with the request's tools.
func NewFamilyParser(f *Family, tools json.RawMessage) *FamilyParser {
	return &FamilyParser{f: f, tools: parseTools(tools)}
}

// Calls reports how many calls have been returned so far.
func (p *FamilyParser) Calls() int { return p.calls }

// Push consumes the next piece of text.
func (p *FamilyParser) Push(text string) (string, []Call) {
	p.pend += text
	var out result
	for p.step(&out) {
	}
	return out.content.String(), out.calls
}

// Flush ends the text: an open section is decoded now.
func (p *FamilyParser) Flush() (string, []Call) {
	var out result
	for p.step(&out) {
	}
	if p.in {
		p.section(&out, p.pend, false)
	} else {
		p.text(&out, p.pend)
	}
	p.pend, p.in = "", false
	if p.calls == 0 {
		out.content.WriteString(p.ws)
	}
	p.ws = ""
	return out.content.String(), out.calls
}

func (p *FamilyParser) step(out *result) bool {
	if !p.in {
		i := strings.Index(p.pend, p.f.Begin)
		if i < 0 {
			keep := len(p.pend) - partialSuffix(p.pend, p.f.Begin)
			p.text(out, p.pend[:keep])
			p.pend = p.pend[keep:]
			return false
		}
		p.text(out, p.pend[:i])
		p.pend = p.pend[i+len(p.f.Begin):]
		p.in = true
		return true
	}
	if p.f.End == "" {
		return false // the section runs to the end of the text
	}
	i := strings.Index(p.pend, p.f.End)
	if i < 0 {
		return false
	}
	body := p.pend[:i]
	p.pend = p.pend[i+len(p.f.End):]
	p.in = false
	p.section(out, body, true)
	return true
}

// section decodes one section body; closed says whether End was seen.
func (p *FamilyParser) section(out *result, body string, closed bool) {
	var cs []Call
	ok := false
	if p.f.decode != nil { // a family with its own stream has none
		cs, ok = p.f.decode(body, p.tools)
	}
	if !ok || len(cs) == 0 {
		raw := p.f.Begin + body
		if closed {
			raw += p.f.End
		}
		p.text(out, raw)
		return
	}
	for _, c := range cs {
		out.calls = append(out.calls, c)
		p.calls++
	}
	p.ws, p.last = "", true
}
