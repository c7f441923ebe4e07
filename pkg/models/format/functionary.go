package format

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
)

// recipientMarker opens every Functionary v3.2 message section:
// >>>RECIPIENT\nBODY. The generation prompt already ends with it, so the
// model's text starts at the recipient.
const recipientMarker = ">>>"

// recipientPrefixRe matches what a recipient line may start with (a
// function name, "all" or "python"); text that leaves it is content.
var recipientPrefixRe = regexp.MustCompile(`^[A-Za-z0-9_.\-]*$`)

// maxRecipient bounds a recipient line: longer text is content.
const maxRecipient = 256

type fsState int

const (
	fsRecipient fsState = iota // reading the recipient line
	fsContent                  // inside ">>>all\n" text
	fsArgs                     // inside a call's JSON arguments
)

// functionaryV32 is the incremental parser of Functionary v3.2's
// recipient sections: ">>>all\nTEXT" is content, ">>>NAME\n{…}" a call
// (up to the next ">>>" or the end). The text starts after the generation
// prompt's ">>>", at the first recipient.
type functionaryV32 struct {
	tools toolSet
	state fsState
	pend  string // undecided text
	name  string // the recipient of the open call
	ws    string // trailing whitespace held back in content
	calls int
}

func newFunctionaryV32(tools toolSet) Stream { return &functionaryV32{tools: tools} }

// Calls reports how many calls have been returned so far.
func (p *functionaryV32) Calls() int { return p.calls }

// Push consumes the next piece of text.
func (p *functionaryV32) Push(text string) (string, []Call) {
	p.pend += text
	var out result
	for p.step(&out, false) {
	}
	return out.content.String(), out.calls
}

// Flush ends the text: an open call is decoded now.
func (p *functionaryV32) Flush() (string, []Call) {
	var out result
	for p.step(&out, true) {
	}
	if p.state == fsArgs {
		p.call(&out, p.pend)
	} else {
		p.text(&out, p.pend)
		out.content.WriteString(p.ws)
	}
	p.pend, p.ws, p.state = "", "", fsRecipient
	return out.content.String(), out.calls
}

// step makes one decision on pend; it reports whether another may follow.
func (p *functionaryV32) step(out *result, final bool) bool {
	switch p.state {
	case fsRecipient:
		line, rest, ok := strings.Cut(p.pend, "\n")
		if !ok {
			if recipientPrefixRe.MatchString(p.pend) && len(p.pend) <= maxRecipient && !final {
				return false
			}
			p.state = fsContent // not a recipient line: plain text
			return p.pend != ""
		}
		name := strings.TrimSpace(line)
		switch {
		case name == "all":
			p.state, p.pend = fsContent, rest
		case name != "" && recipientPrefixRe.MatchString(name):
			p.state, p.name, p.pend = fsArgs, name, rest
		default:
			p.state = fsContent
		}
		return true
	case fsContent:
		i := strings.Index(p.pend, recipientMarker)
		if i < 0 {
			keep := len(p.pend) - partialSuffix(p.pend, recipientMarker)
			p.text(out, p.pend[:keep])
			p.pend = p.pend[keep:]
			return false
		}
		p.text(out, p.pend[:i])
		p.ws = "" // whitespace before the next section is dropped
		p.pend, p.state = p.pend[i+len(recipientMarker):], fsRecipient
		return true
	default: // fsArgs
		i := strings.Index(p.pend, recipientMarker)
		if i < 0 {
			return false
		}
		p.call(out, p.pend[:i])
		p.pend, p.state = p.pend[i+len(recipientMarker):], fsRecipient
		return true
	}
}

// text adds content, holding back trailing whitespace.
func (p *functionaryV32) text(out *result, s string) {
	body := strings.TrimRightFunc(s, unicode.IsSpace)
	if body == "" {
		p.ws += s
		return
	}
	out.content.WriteString(p.ws)
	out.content.WriteString(body)
	p.ws = s[len(body):]
}

// call decodes the body of a section addressed to p.name: JSON arguments,
// or for "python" the code itself; anything else is content unchanged.
func (p *functionaryV32) call(out *result, body string) {
	if a, ok := argumentsJSON(json.RawMessage(strings.TrimSpace(body))); ok {
		out.calls = append(out.calls, Call{Name: p.name, Arguments: a})
		p.calls++
		return
	}
	if p.name == "python" && strings.TrimSpace(body) != "" {
		raw, _ := json.Marshal(map[string]string{"code": body})
		out.calls = append(out.calls, Call{Name: p.name, Arguments: string(raw)})
		p.calls++
		return
	}
	out.content.WriteString(p.name + "\n" + body)
}
