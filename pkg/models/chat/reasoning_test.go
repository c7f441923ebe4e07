package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetectReasoning: each family's real template selects its format.
func TestDetectReasoning(t *testing.T) {
	cases := []struct{ template, want string }{
		{"ByteDance-Seed-OSS.jinja", "seed"},
		{"mistralai-Ministral-3-14B-Reasoning-2512.jinja", "mistral"},
		{"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "command-r"},
		{"Qwen-Qwen3-0.6B.jinja", "think"},
		{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "think"},
		{"GLM-4.6.jinja", "think"},
		{"Mistral-Small-3.2-24B-Instruct-2506.jinja", ""},
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusDir, "templates", c.template))
			if err != nil {
				t.Fatal(err)
			}
			r, ok := DetectReasoning(string(src), func(string) bool { return false })
			if r.Name != c.want || ok != (c.want != "") {
				t.Errorf("DetectReasoning = %q (%v), want %q", r.Name, ok, c.want)
			}
		})
	}
	if r, ok := DetectReasoning("{{ messages }}", func(s string) bool { return s == ThinkOpen }); !ok || r.Name != "think" {
		t.Errorf("a <think> token in the vocabulary: got %q, %v", r.Name, ok)
	}
}

// TestReasoningSplitters: every format splits its reasoning out, whole and
// one byte at a time.
func TestReasoningSplitters(t *testing.T) {
	for _, r := range reasoningFormats() {
		text := r.Open + "\nstep one\n" + r.Close + "\n\nThe answer."
		for _, step := range []int{len(text), 1} {
			s := r.NewSplitter(false)
			var reasoning, content strings.Builder
			for i := 0; i < len(text); i += step {
				a, b := s.Push(text[i:min(len(text), i+step)])
				reasoning.WriteString(a)
				content.WriteString(b)
			}
			a, b := s.Flush()
			reasoning.WriteString(a)
			content.WriteString(b)
			if reasoning.String() != "step one" || content.String() != "The answer." {
				t.Errorf("%s step %d: reasoning %q, content %q", r.Name, step, reasoning.String(), content.String())
			}
		}
		if !r.PromptOpens("prompt"+r.Open) || r.PromptOpens("prompt"+r.Open+"x"+r.Close) {
			t.Errorf("%s: PromptOpens", r.Name)
		}
	}
}
