package format

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
		{"openai-gpt-oss-120b.jinja", "harmony"},
	}
	for _, c := range cases {
		t.Run(c.template, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusTemplates, c.template))
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
		if r.harmony {
			continue // TestHarmonySplitter
		}
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

// TestHarmonySplitter: GPT-OSS's analysis channel is reasoning, the final
// channel content, and a message to a function becomes
// "to=functions.NAME<|message|>ARGS" content, whole and one byte at a time.
func TestHarmonySplitter(t *testing.T) {
	cases := []struct{ name, text, reasoning, content string }{
		{"final", "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Answer.",
			"Think.", "Answer."},
		{"tool call", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}",
			"Need weather.", `to=functions.get_weather<|message|>{"city": "Paris"}`},
		{"recipient first", " to=functions.search<|channel|>commentary json<|message|>{}", "", "to=functions.search<|message|>{}"},
		{"final only", "<|channel|>final<|message|>Hi there.<|end|>", "", "Hi there."},
	}
	for _, c := range cases {
		for _, step := range []int{len(c.text), 1} {
			s := harmonyReasoning.NewSplitter(false)
			var reasoning, content strings.Builder
			for i := 0; i < len(c.text); i += step {
				a, b := s.Push(c.text[i:min(len(c.text), i+step)])
				reasoning.WriteString(a)
				content.WriteString(b)
			}
			a, b := s.Flush()
			reasoning.WriteString(a)
			content.WriteString(b)
			if reasoning.String() != c.reasoning || content.String() != c.content {
				t.Errorf("%s step %d: reasoning %q, content %q", c.name, step, reasoning.String(), content.String())
			}
		}
	}
}
