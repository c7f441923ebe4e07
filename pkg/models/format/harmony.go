package format

import (
	"strings"
	"unicode"
)

// Harmony (GPT-OSS) message markers.
const (
	harmonyStart     = "<|start|>"
	harmonyChannel   = "<|channel|>"
	harmonyMessage   = "<|message|>"
	harmonyEnd       = "<|end|>"
	harmonyConstrain = "<|constrain|>"
	// harmonyRecipient starts the recipient of a tool call in a harmony
	// header ("to=functions.NAME"); the HarmonySplitter passes tool calls
	// on as content in the form harmonyRecipient+NAME+"<|message|>"+ARGS,
	// which the harmony Family opens with and decodeHarmony reads.
	harmonyRecipient = "to=functions."
)

// harmonyReasoning is GPT-OSS's harmony format: messages
// [<|start|>assistant]<|channel|>CHANNEL[ to=functions.NAME][ <|constrain|>json]<|message|>BODY<|end|>.
var harmonyReasoning = Reasoning{Name: "harmony", Open: harmonyChannel + "analysis" + harmonyMessage, Close: harmonyEnd, harmony: true}

// HarmonySplitter splits GPT-OSS harmony output: the analysis channel is
// reasoning, the final channel content, and a message addressed to a
// function is passed on as content "to=functions.NAME<|message|>ARGS" for
// the tool-call parser. Headers are dropped. Push may be given any split of
// the text; it is not safe for concurrent use.
type HarmonySplitter struct {
	pend    string
	inBody  bool
	channel string // the current message's channel
	call    bool   // the current message is a tool call
}

// Push consumes the next piece of text.
func (s *HarmonySplitter) Push(text string) (reasoning, content string) {
	s.pend += text
	var r, c strings.Builder
	for s.step(&r, &c, false) {
	}
	return r.String(), c.String()
}

// Flush ends the stream: a message cut off (by <|call|> or <|return|>,
// which end generation) is complete.
func (s *HarmonySplitter) Flush() (reasoning, content string) {
	var r, c strings.Builder
	for s.step(&r, &c, true) {
	}
	if !s.inBody && strings.TrimSpace(s.pend) != "" && !strings.Contains(s.pend, harmonyChannel) {
		c.WriteString(s.pend) // text outside any message
	}
	s.pend = ""
	return r.String(), c.String()
}

// step makes one decision; false when it needs more text.
func (s *HarmonySplitter) step(r, c *strings.Builder, final bool) bool {
	if !s.inBody {
		i := strings.Index(s.pend, harmonyMessage)
		if i < 0 {
			return false
		}
		s.header(s.pend[:i])
		s.pend = s.pend[i+len(harmonyMessage):]
		s.inBody = true
		if s.call {
			c.WriteString(harmonyRecipient + s.channel + harmonyMessage)
		}
		return true
	}
	out := c
	if s.channel == "analysis" && !s.call {
		out = r
	}
	if i := strings.Index(s.pend, harmonyEnd); i >= 0 {
		body := s.pend[:i]
		if out == r {
			body = strings.TrimRightFunc(body, unicode.IsSpace)
		}
		out.WriteString(body)
		s.pend = s.pend[i+len(harmonyEnd):]
		s.inBody, s.call, s.channel = false, false, ""
		return true
	}
	keep := len(s.pend)
	if !final {
		keep -= partialSuffix(s.pend, harmonyEnd)
	}
	out.WriteString(s.pend[:keep])
	s.pend = s.pend[keep:]
	return false
}

// header reads a message header: its channel, and its recipient when it
// is a tool call (then channel holds the function name).
func (s *HarmonySplitter) header(h string) {
	h = strings.ReplaceAll(h, harmonyStart+"assistant", " ")
	h = strings.ReplaceAll(h, harmonyConstrain, " ")
	s.channel, s.call = "", false
	if i := strings.Index(h, harmonyRecipient); i >= 0 {
		name := h[i+len(harmonyRecipient):]
		if j := strings.IndexAny(name, " <"); j >= 0 {
			name = name[:j]
		}
		s.channel, s.call = name, true
		return
	}
	if i := strings.Index(h, harmonyChannel); i >= 0 {
		fields := strings.Fields(h[i+len(harmonyChannel):])
		if len(fields) > 0 {
			s.channel = fields[0]
		}
	}
}
