package format

import "encoding/json"

// Format is one model's output format, chosen once when the model loads.
type Format struct {
	// Reasoning marks reasoning in the text; nil when the model has none
	// (everything outside tool calls is content).
	Reasoning *Reasoning
	// Tools is the tool-call family; nil means the generic Parser.
	Tools *Family
}

// Detect picks the output format of a model from its chat template and
// vocabulary (hasToken reports whether a string is one token; nil for
// none): the reasoning format as DetectReasoning chooses it and the
// tool-call family as DetectFamily does.
func Detect(template string, hasToken func(string) bool) Format {
	var f Format
	if r, ok := DetectReasoning(template, hasToken); ok {
		f.Reasoning = &r
	}
	f.Tools = DetectFamily(template)
	return f
}

// ReasoningMarkers are the texts a decoder must render, even when the
// vocabulary has them as control tokens, for reasoning to be split out.
func (f Format) ReasoningMarkers() []string {
	if f.Reasoning == nil {
		return nil
	}
	return f.Reasoning.Markers()
}

// ToolMarkers are the texts a decoder must render, in requests that
// declare tools, for the family's tool calls to be parsed (the generic
// Parser's PythonTag aside, which a decoder keeps for every model).
func (f Format) ToolMarkers() []string {
	if f.Tools == nil {
		return nil
	}
	return f.Tools.Markers()
}

// Choice is a request's tool choice: Required makes the whole answer one
// call, of the function Name or ("" ) of any of the request's tools.
type Choice struct {
	Required bool
	Name     string
}

// Options describe one generation to its parser.
type Options struct {
	// Prompt is the rendered prompt; one that ends inside an open
	// reasoning block starts the generation in reasoning. "" for raw
	// completions.
	Prompt string
	// NoReasoning takes the whole text as content (JSON mode, where the
	// output is one JSON object).
	NoReasoning bool
	// Tools is the request's OpenAI tools array; nil leaves tool-call
	// markup in the content.
	Tools json.RawMessage
	// Choice requires a call (with Tools).
	Choice Choice
}

// Piece is what a parser returns for one Push or Flush: the reasoning,
// content and tool calls that are now certain.
type Piece struct {
	Reasoning, Content string
	Calls              []Call
}

// OutputParser splits one generation's text: the reasoning splitter
// first, then the tool-call parser on the content. It is not safe for
// concurrent use.
type OutputParser struct {
	think  Splitter    // nil: no reasoning
	tools  Stream      // nil: no tool-call parsing
	forced *forcedCall // a required call: the whole content is the call
}

// NewParser starts the parser of one generation.
func (f Format) NewParser(o Options) *OutputParser {
	p := &OutputParser{}
	if f.Reasoning != nil && !o.NoReasoning {
		p.think = f.Reasoning.NewSplitter(f.Reasoning.PromptOpens(o.Prompt))
	}
	if o.Tools == nil {
		return p
	}
	if o.Choice.Required {
		p.forced = newForcedCall(o.Choice.Name, o.Tools)
	} else {
		p.tools = f.Tools.newStream(o.Tools)
	}
	return p
}

// Push consumes the next piece of generated text.
func (p *OutputParser) Push(text string) Piece {
	var out Piece
	if p.think != nil {
		out.Reasoning, text = p.think.Push(text)
	}
	out.Content, out.Calls = p.content(text)
	return out
}

// Flush ends the text: whatever is still held is decided now.
func (p *OutputParser) Flush() Piece {
	var out Piece
	rest := ""
	if p.think != nil {
		out.Reasoning, rest = p.think.Flush()
	}
	out.Content, out.Calls = p.content(rest)
	var c string
	var more []Call
	switch {
	case p.forced != nil:
		c, more = p.forced.flush()
	case p.tools != nil:
		c, more = p.tools.Flush()
	}
	out.Content += c
	out.Calls = append(out.Calls, more...)
	return out
}

// content passes content text through the tool-call parser.
func (p *OutputParser) content(text string) (string, []Call) {
	switch {
	case p.forced != nil:
		p.forced.text = append(p.forced.text, text...)
		return "", nil
	case p.tools != nil:
		return p.tools.Push(text)
	}
	return text, nil
}
