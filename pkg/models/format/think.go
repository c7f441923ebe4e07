package format

import (
	"strings"
	"unicode"
)

// Reasoning tags of Qwen3, DeepSeek-R1 and most open reasoning models.
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// ThinkSplitter separates <think>…</think> reasoning from the answer in
// generated text, incrementally: Push may be called with any split of the
// stream (tags cut across pushes, one byte at a time) and the concatenated
// outputs are always the same as for one Push of the whole text.
//
// Whitespace at the start of each section (after <think>, after </think>,
// at the start of the stream) is dropped, as is whitespace right before
// </think>; everything else passes through unchanged. A ThinkSplitter is not
// safe for concurrent use.
type ThinkSplitter struct {
	open    string // the tag opening reasoning (ThinkOpen by default)
	close   string // the tag closing it
	inThink bool
	atStart bool   // at the start of a section: leading whitespace is dropped
	pend    string // held back: a possible partial tag (and, in reasoning, trailing whitespace)
}

// NewThinkSplitter returns a splitter; startInThink is true when the prompt
// already opened a <think> block (see PromptOpensThink).
func NewThinkSplitter(startInThink bool) *ThinkSplitter {
	return newTagSplitter(DefaultReasoning, startInThink)
}

// InThink reports whether the text so far ends inside a reasoning block.
func (s *ThinkSplitter) InThink() bool { return s.inThink }

// Push consumes the next piece of generated text and returns the reasoning
// and answer text that are now certain.
func (s *ThinkSplitter) Push(text string) (reasoning, content string) {
	s.pend += text
	var r, c strings.Builder
	for {
		if s.atStart {
			s.pend = strings.TrimLeftFunc(s.pend, unicode.IsSpace)
			if s.pend == "" {
				break
			}
			s.atStart = false
		}
		tag := s.open
		if s.inThink {
			tag = s.close
		}
		if i := strings.Index(s.pend, tag); i >= 0 {
			if s.inThink {
				r.WriteString(strings.TrimRightFunc(s.pend[:i], unicode.IsSpace))
			} else {
				c.WriteString(s.pend[:i])
			}
			s.pend = s.pend[i+len(tag):]
			s.inThink = !s.inThink
			s.atStart = true
			continue
		}
		keep := len(s.pend) - partialSuffix(s.pend, tag)
		if s.inThink {
			keep = len(strings.TrimRightFunc(s.pend[:keep], unicode.IsSpace))
			r.WriteString(s.pend[:keep])
		} else {
			c.WriteString(s.pend[:keep])
		}
		s.pend = s.pend[keep:]
		break
	}
	return r.String(), c.String()
}

// Flush ends the stream, releasing held-back text: an unfinished tag is
// plain text, and reasoning cut off before </think> stays reasoning.
func (s *ThinkSplitter) Flush() (reasoning, content string) {
	p := s.pend
	s.pend = ""
	if s.inThink {
		return strings.TrimRightFunc(p, unicode.IsSpace), ""
	}
	return "", p
}

// PromptOpensThink reports whether a rendered prompt ends inside an open
// <think> block (e.g. DeepSeek-R1's generation prompt "<think>\n"), so
// generation starts in reasoning: NewThinkSplitter(PromptOpensThink(p)).
func PromptOpensThink(prompt string) bool { return DefaultReasoning.PromptOpens(prompt) }
