package format

import (
	"testing"
	"unicode/utf8"
)

type thinkOut struct{ reasoning, content string }

// runSplitter pushes pieces and concatenates every output.
func runSplitter(startInThink bool, pieces ...string) thinkOut {
	s := NewThinkSplitter(startInThink)
	var out thinkOut
	for _, p := range pieces {
		r, c := s.Push(p)
		out.reasoning += r
		out.content += c
	}
	r, c := s.Flush()
	out.reasoning += r
	out.content += c
	return out
}

func TestThinkSplitter(t *testing.T) {
	cases := []struct {
		name, text   string
		startInThink bool
		want         thinkOut
	}{
		{"qwen3", "<think>\nLet me think.\nOK.\n</think>\n\nThe answer is 4.", false, thinkOut{"Let me think.\nOK.", "The answer is 4."}},
		{"no reasoning", "Just an answer <b>bold</b> < 3 <th", false, thinkOut{"", "Just an answer <b>bold</b> < 3 <th"}},
		{"empty think (enable_thinking=false output)", "<think>\n\n</think>\n\nHi", false, thinkOut{"", "Hi"}},
		{"prompt opened think", "reasoning here\n</think>\n\nanswer", true, thinkOut{"reasoning here", "answer"}},
		{"truncated reasoning", "<think>\nstill thinking </thi", false, thinkOut{"still thinking </thi", ""}},
		{"text before think", "pre <think>r</think>post", false, thinkOut{"r", "pre post"}},
		{"unicode", "<think>日本 😀</think>é", false, thinkOut{"日本 😀", "é"}},
		{"lookalike tags", "<think>a <thinking> </thin b</think>c <think", false, thinkOut{"a <thinking> </thin b", "c <think"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole := runSplitter(c.startInThink, c.text)
			if whole != c.want {
				t.Fatalf("one push: got %+v want %+v", whole, c.want)
			}
			// Every split point (at character boundaries), and every character apart.
			for i := 0; i <= len(c.text); i++ {
				if !utf8.RuneStart(c.text[min(i, len(c.text)-1)]) && i < len(c.text) {
					continue
				}
				if got := runSplitter(c.startInThink, c.text[:i], c.text[i:]); got != c.want {
					t.Fatalf("split at %d (%q|%q): got %+v want %+v", i, c.text[:i], c.text[i:], got, c.want)
				}
			}
			var chars []string
			for _, r := range c.text {
				chars = append(chars, string(r))
			}
			if got := runSplitter(c.startInThink, chars...); got != c.want {
				t.Fatalf("char by char: got %+v want %+v", got, c.want)
			}
		})
	}
}

func TestThinkSplitterHoldsPartialTag(t *testing.T) {
	s := NewThinkSplitter(false)
	if r, c := s.Push("Hello <thi"); r != "" || c != "Hello " {
		t.Fatalf("got %q %q: the partial tag must be held back", r, c)
	}
	if r, c := s.Push("nk>idea</"); r != "idea" || c != "" {
		t.Fatalf("got %q %q", r, c)
	}
	if !s.InThink() {
		t.Fatal("must be in think")
	}
	if r, c := s.Push("think>done"); r != "" || c != "done" {
		t.Fatalf("got %q %q", r, c)
	}
}

func TestPromptOpensThink(t *testing.T) {
	cases := map[string]bool{
		"<|im_start|>assistant\n":                        false,
		"<|im_start|>assistant\n<think>\n\n</think>\n\n": false,
		"<｜Assistant｜><think>\n":                         true,
		"<think>old</think> user text <think>":           true,
		"":                                               false,
	}
	for p, want := range cases {
		if got := PromptOpensThink(p); got != want {
			t.Errorf("PromptOpensThink(%q) = %v, want %v", p, got, want)
		}
	}
}
