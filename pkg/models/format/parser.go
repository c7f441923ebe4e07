package format

import (
	"encoding/json"
	"strings"
	"unicode"
)

// Markers of the text formats.
const (
	OpenTag   = "<tool_call>"
	CloseTag  = "</tool_call>"
	PythonTag = "<|python_tag|>"
)

// Call is one parsed tool call.
type Call struct {
	// ID is the call id when the format writes one (Mistral, Command R7B,
	// Kimi K2); "" otherwise.
	ID   string
	Name string
	// Arguments is a JSON object, compact ("{}" when the model gave none).
	Arguments string
}

type state int

const (
	stText   state = iota // plain text
	stTagged              // inside <tool_call>, waiting for </tool_call>
	stPython              // after <|python_tag|>: the rest of the answer
	stBare                // a JSON value at the start of the answer
)

// Parser is the generic tool-call parser, for models whose chat template
// matches no Family. Recognised formats:
//   - Hermes / Qwen: <tool_call>{"name": …, "arguments": {…}}</tool_call>,
//     any number of them, with text before, between and after; the body may
//     also be Qwen3-Coder's <function=NAME><parameter=KEY>VALUE</parameter></function>.
//   - Llama 3.x: the whole answer is one or more JSON objects
//     {"name": …, "parameters": {…}} (separated by ";" or whitespace), the
//     name being one of the request's tools; Mistral's list
//     [{"name": …, "arguments": {…}}, …] is taken the same way.
//   - Llama 3.x <|python_tag|> (when it appears in the text): the rest of
//     the answer is JSON call(s), a built-in call NAME.call(key="value", …),
//     or code for a "python" / "code_interpreter" tool.
//
// Text that only looks like the start of a call is held back until it is
// decided; anything that turns out not to be a call is returned as content,
// unchanged.
//
// Parser splits generated text into content and tool calls. Push may be
// given any split of the text (markers cut across pushes, one byte at a
// time): the concatenated results are the same as for one Push of the
// whole text followed by Flush. Whitespace around calls is dropped. A
// Parser is not safe for concurrent use.
type Parser struct {
	tools toolSet
	st    state
	pend  string // text not yet decided
	spacing
	tagWS    string // whitespace before the open marker (restored if it is no call)
	bareOK   bool   // no content yet: a bare JSON answer may still be a call
	afterSep bool   // right after a bare call: ";" separators are dropped
	calls    int    // calls found so far
}

// NewParser returns a parser for a request with the given OpenAI `tools`
// array (their names decide whether a bare JSON answer is a call, and
// parameter types guide the XML form).
func NewParser(tools json.RawMessage) *Parser {
	return &Parser{tools: parseTools(tools), bareOK: true}
}

// Calls reports how many calls have been returned so far.
func (p *Parser) Calls() int { return p.calls }

// Push consumes the next piece of text and returns the content and calls
// that are now certain.
func (p *Parser) Push(text string) (string, []Call) {
	p.pend += text
	var out result
	for p.step(&out) {
	}
	return out.content.String(), out.calls
}

// Flush ends the text: whatever is still held is decided now (an
// unterminated call that parses is a call; anything else is content).
func (p *Parser) Flush() (string, []Call) {
	var out result
	for p.step(&out) {
	}
	pend := p.pend
	p.pend = ""
	switch p.st {
	case stTagged:
		if c, ok := p.tagged(pend); ok {
			out.call(p, c)
		} else {
			p.ws = p.tagWS
			p.text(&out, OpenTag+pend)
		}
	case stPython:
		if cs, ok := p.python(pend); ok {
			for _, c := range cs {
				out.call(p, c)
			}
		} else {
			p.ws = p.tagWS
			p.text(&out, strings.TrimSpace(pend))
		}
	default:
		p.text(&out, pend)
	}
	p.st = stText
	if p.calls == 0 {
		out.content.WriteString(p.ws)
	}
	p.ws = ""
	return out.content.String(), out.calls
}

type result struct {
	content strings.Builder
	calls   []Call
}

func (r *result) call(p *Parser, c Call) {
	r.calls = append(r.calls, c)
	p.calls++
	p.ws = ""
	p.last = true
}

// step makes one decision on p.pend; false when it needs more text.
func (p *Parser) step(out *result) bool {
	switch p.st {
	case stTagged:
		return p.stepTagged(out)
	case stPython:
		return false
	case stBare:
		return p.stepBare(out)
	}
	return p.stepText(out)
}

func (p *Parser) stepText(out *result) bool {
	if p.afterSep {
		p.pend = strings.TrimLeftFunc(p.pend, func(r rune) bool { return r == ';' || unicode.IsSpace(r) })
		if p.pend == "" {
			return false
		}
		p.afterSep = false
	}
	if p.bareOK {
		t := strings.TrimLeftFunc(p.pend, unicode.IsSpace)
		p.ws += p.pend[:len(p.pend)-len(t)]
		p.pend = t
		if t == "" {
			return false
		}
		if t[0] == '{' || t[0] == '[' {
			p.st = stBare
			return true
		}
		p.bareOK = false
	}
	if i, tag := firstTag(p.pend); i >= 0 {
		p.text(out, p.pend[:i])
		p.pend = p.pend[i+len(tag):]
		p.tagWS, p.ws = p.ws, ""
		p.bareOK = false
		p.st = stTagged
		if tag == PythonTag {
			p.st = stPython
		}
		return true
	}
	keep := len(p.pend) - max(partialSuffix(p.pend, OpenTag), partialSuffix(p.pend, PythonTag))
	p.text(out, p.pend[:keep])
	p.pend = p.pend[keep:]
	return false
}

func (p *Parser) stepTagged(out *result) bool {
	i := strings.Index(p.pend, CloseTag)
	if i < 0 {
		return false
	}
	body := p.pend[:i]
	p.pend = p.pend[i+len(CloseTag):]
	p.st = stText
	if c, ok := p.tagged(body); ok {
		out.call(p, c)
	} else {
		p.ws = p.tagWS
		p.text(out, OpenTag+body+CloseTag)
	}
	return true
}

func (p *Parser) stepBare(out *result) bool {
	n, st := scanJSON(p.pend)
	switch st {
	case scanMore:
		return false
	case scanBad:
		p.st, p.bareOK = stText, false
		return true
	}
	cs, ok := p.bare(p.pend[:n])
	if !ok {
		p.st, p.bareOK = stText, false
		return true
	}
	for _, c := range cs {
		out.call(p, c)
	}
	p.pend = p.pend[n:]
	p.st = stText
	p.afterSep = true
	return true
}

// text adds plain text to the output (see spacing); a bare JSON answer
// can no longer be a call after it.
func (p *Parser) text(out *result, s string) {
	if s == "" {
		return
	}
	p.spacing.text(out, s)
	p.bareOK = false
}

// spacing is the whitespace rule both parsers apply to plain text:
// trailing whitespace is held back (dropped if a call follows) and
// whitespace right after a call is dropped.
type spacing struct {
	ws   string // whitespace held back
	last bool   // the last output was a call
}

func (sp *spacing) text(out *result, s string) {
	if s == "" {
		return
	}
	body := strings.TrimRightFunc(s, unicode.IsSpace)
	if body == "" {
		sp.ws += s
		return
	}
	if sp.last {
		sp.ws = ""
		body = strings.TrimLeftFunc(body, unicode.IsSpace)
		sp.last = false
	}
	out.content.WriteString(sp.ws)
	out.content.WriteString(body)
	sp.ws = s[len(strings.TrimRightFunc(s, unicode.IsSpace)):]
}

// firstTag finds the earliest marker in s.
func firstTag(s string) (int, string) {
	i, j := strings.Index(s, OpenTag), strings.Index(s, PythonTag)
	switch {
	case i < 0 && j < 0:
		return -1, ""
	case j < 0 || (i >= 0 && i < j):
		return i, OpenTag
	default:
		return j, PythonTag
	}
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
