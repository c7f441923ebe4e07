package chat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

type goldenCase struct {
	Name          string                     `json:"name"`
	Template      string                     `json:"template"`
	Messages      json.RawMessage            `json:"messages"`
	Tools         json.RawMessage            `json:"tools"`
	Kwargs        map[string]json.RawMessage `json:"kwargs"`
	Expected      *string                    `json:"expected"`
	ExpectedError string                     `json:"expected_error"`
}

func loadGoldens(t *testing.T, file string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path(t, "templates", file))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return cases
}

// goldenInput maps a fixture case onto Input: add_generation_prompt is a
// kwarg in the fixtures.
func goldenInput(t *testing.T, c goldenCase) Input {
	t.Helper()
	in := Input{Messages: c.Messages, Tools: c.Tools, Kwargs: map[string]any{}}
	for k, v := range c.Kwargs {
		if k == "add_generation_prompt" {
			if err := json.Unmarshal(v, &in.AddGenerationPrompt); err != nil {
				t.Fatalf("add_generation_prompt: %v", err)
			}
			continue
		}
		in.Kwargs[k] = v
	}
	return in
}

func TestGoldens(t *testing.T) {
	for _, file := range []string{"qwen3.json", "llama3_1.json"} {
		for _, c := range loadGoldens(t, file) {
			t.Run(strings.TrimSuffix(file, ".json")+"/"+c.Name, func(t *testing.T) {
				tpl, err := Compile(c.Template)
				if err != nil {
					t.Fatalf("compile: %v", err)
				}
				got, err := tpl.Render(context.Background(), goldenInput(t, c))
				if c.ExpectedError != "" {
					var te *TemplateError
					if !errors.As(err, &te) || !strings.Contains(te.Message, c.ExpectedError) {
						t.Fatalf("want TemplateError containing %q, got %v (output %q)", c.ExpectedError, err, got)
					}
					return
				}
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if c.Expected == nil {
					t.Fatal("fixture has neither expected nor expected_error")
				}
				if got != *c.Expected {
					t.Errorf("mismatch\n got: %q\nwant: %q", got, *c.Expected)
				}
			})
		}
	}
}
