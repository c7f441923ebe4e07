package format

import "strings"

// Reasoning is one family's way of marking reasoning in generated text:
// everything between Open and Close goes to reasoning_content.
type Reasoning struct {
	// Name identifies the format ("think", "mistral", "seed", ...).
	Name string
	// Open and Close delimit the reasoning.
	Open, Close string
	// harmony selects the HarmonySplitter (GPT-OSS channels).
	harmony bool
}

// Splitter separates reasoning from content in streamed text; Push may be
// given any split of the text.
type Splitter interface {
	Push(text string) (reasoning, content string)
	Flush() (reasoning, content string)
}

// Markers are the texts a decoder must render for the splitter to see
// them, even when the vocabulary makes them control tokens.
func (r Reasoning) Markers() []string {
	if r.harmony {
		return []string{harmonyStart, harmonyChannel, harmonyMessage, harmonyEnd, harmonyConstrain}
	}
	return []string{r.Open, r.Close}
}

// DefaultReasoning is <think>…</think> (Qwen3, DeepSeek R1, GLM, Kimi K2
// Thinking, MiniMax-M2, Nemotron and most open reasoning models).
var DefaultReasoning = Reasoning{Name: "think", Open: ThinkOpen, Close: ThinkClose}

// reasoningFormats are checked in order; the first whose Open appears in
// the template (harmony: its <|channel|> marker; <think>: also a token of
// the vocabulary) wins.
func reasoningFormats() []Reasoning {
	return []Reasoning{
		harmonyReasoning,
		{Name: "seed", Open: "<seed:think>", Close: "</seed:think>"},
		{Name: "mistral", Open: "[THINK]", Close: "[/THINK]"},
		{Name: "command-r", Open: "<|START_THINKING|>", Close: "<|END_THINKING|>"},
		DefaultReasoning,
	}
}

// DetectReasoning picks the reasoning format of a model from its chat
// template and vocabulary (hasToken reports whether a string is one token):
// a format is chosen when the template writes its opening marker, or, for
// <think>, when the vocabulary has the token. ok is false when the model
// has none.
func DetectReasoning(template string, hasToken func(string) bool) (Reasoning, bool) {
	for _, r := range reasoningFormats() {
		if strings.Contains(template, r.Open) || r.harmony && strings.Contains(template, harmonyChannel) {
			return r, true
		}
	}
	if hasToken != nil && hasToken(ThinkOpen) {
		return DefaultReasoning, true
	}
	return Reasoning{}, false
}

// NewSplitter returns a splitter for r; startInThink is true when the
// prompt already opened reasoning (see PromptOpens).
func (r Reasoning) NewSplitter(startInThink bool) Splitter {
	if r.harmony {
		return &HarmonySplitter{}
	}
	return newTagSplitter(r, startInThink)
}

func newTagSplitter(r Reasoning, startInThink bool) *ThinkSplitter {
	return &ThinkSplitter{open: r.Open, close: r.Close, inThink: startInThink, atStart: true}
}

// PromptOpens reports whether a rendered prompt ends inside an open
// reasoning block, so generation starts in reasoning.
func (r Reasoning) PromptOpens(prompt string) bool {
	open := strings.LastIndex(prompt, r.Open)
	return open >= 0 && strings.LastIndex(prompt, r.Close) < open
}
