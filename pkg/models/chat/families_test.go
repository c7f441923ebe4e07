package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// familiesDir holds the published chat templates of the newer families and
// their goldens, rendered by scripts/templategold/gen.py with Python Jinja2
// in transformers' environment (see the README there).
const familiesDir = "testdata/families"

// familyGolden is one family's golden file: the cases use the shared
// fixtures' schema (messages, tools, kwargs with add_generation_prompt and
// the special tokens, expected or expected_error) with the template named
// once at the top instead of inlined in every case.
type familyGolden struct {
	Family      string             `json:"family"`
	Template    string             `json:"template"`
	StrftimeNow string             `json:"strftime_now"`
	Cases       []familyGoldenCase `json:"cases"`
}

type familyGoldenCase struct {
	goldenCase
	ExpectedErrorType string `json:"expected_error_type"`
}

func loadFamily(t *testing.T, family string) (*familyGolden, *Template) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(familiesDir, family+".json"))
	if err != nil {
		t.Fatalf("family goldens (regenerate with scripts/templategold/gen.py): %v", err)
	}
	var g familyGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s.json: %v", family, err)
	}
	if g.Family != family || len(g.Cases) == 0 {
		t.Fatalf("%s.json: family %q with %d cases", family, g.Family, len(g.Cases))
	}
	src, err := os.ReadFile(filepath.Join(familiesDir, g.Template))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Compile(string(src))
	if err != nil {
		t.Fatalf("compile %s: %v", g.Template, err)
	}
	at, err := time.ParseInLocation("2006-01-02T15:04:05", g.StrftimeNow, time.Local)
	if err != nil {
		t.Fatalf("strftime_now %q: %v", g.StrftimeNow, err)
	}
	tpl.now = func() time.Time { return at }
	return &g, tpl
}

// checkFamilyCase renders one case and says how it differs from Python's
// result ("" when it matches byte for byte).
func checkFamilyCase(t *testing.T, tpl *Template, c familyGoldenCase) string {
	got, err := tpl.Render(context.Background(), goldenInput(t, c.goldenCase))
	switch {
	case c.ExpectedErrorType != "":
		// Python raised inside the template (TypeError and the like): any
		// render error matches.
		if err == nil {
			return fmt.Sprintf("want a render error (%s: %s), got output %q", c.ExpectedErrorType, c.ExpectedError, got)
		}
	case c.ExpectedError != "":
		var te *TemplateError
		if !errors.As(err, &te) || te.Message != c.ExpectedError {
			return fmt.Sprintf("want raise_exception(%q), got %v (output %q)", c.ExpectedError, err, got)
		}
	case err != nil:
		return fmt.Sprintf("render: %v", err)
	case c.Expected == nil:
		return "golden has neither expected nor expected_error"
	case got != *c.Expected:
		return fmt.Sprintf("mismatch at byte %d\n got: %q\nwant: %q", firstDiff(got, *c.Expected), got, *c.Expected)
	}
	return ""
}

// TestFamilyGoldens renders the published templates of Qwen3.5, Gemma 3,
// Mistral (Ministral 3, Mistral Small 3.2) and Phi-3.5 over their goldens
// and compares each byte for byte with Jinja2's output.
func TestFamilyGoldens(t *testing.T) {
	for _, family := range []string{"qwen3_5", "gemma3", "ministral3", "mistral_small3_2", "phi3_5"} {
		t.Run(family, func(t *testing.T) {
			g, tpl := loadFamily(t, family)
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) {
					if diff := checkFamilyCase(t, tpl, c); diff != "" {
						t.Error(diff)
					}
				})
			}
		})
	}
}
