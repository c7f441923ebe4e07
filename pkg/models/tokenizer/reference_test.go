package tokenizer

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

type refCase struct {
	Name   string  `json:"name"`
	Prompt string  `json:"prompt"`
	Tokens []int32 `json:"tokens"`
}

func loadReference(t testing.TB, file string) []refCase {
	t.Helper()
	raw, err := os.ReadFile(fixtures.Path(t, "reference", file))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return ref.Cases
}

// TestReferencePrompts checks llama.cpp's prompt tokens (add_special=true,
// parse_special=false) with the vocabularies inside the model files.
func TestReferencePrompts(t *testing.T) {
	for _, tc := range []struct{ model, ref string }{
		{"stories260K.gguf", "stories260K.json"},
		{"llama-2-tiny-random.gguf", "llama-2-tiny-random.json"},
		{"qwen3-tiny-Q8_0.gguf", "qwen3-tiny-Q8_0.json"},
		{"llama-q-Q8_0.gguf", "llama-q-Q8_0.json"},
		{"qwen2-tiny-F32.gguf", "qwen2-tiny-F32.json"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			tk := loadGGUF(t, "models", tc.model)
			for _, c := range loadReference(t, tc.ref) {
				got, err := tk.Encode(c.Prompt, true, false)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if !equalIDs(got, c.Tokens) {
					t.Errorf("%s:\n got  %v\n want %v", c.Name, got, c.Tokens)
				}
				if dec := tk.Decode(c.Tokens); dec != c.Prompt {
					t.Errorf("%s: decode = %q, want %q", c.Name, dec, c.Prompt)
				}
			}
		})
	}
}
