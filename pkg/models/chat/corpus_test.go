package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corpusDir holds the conformance corpus scripts/gen_chat_corpus.py writes:
// llama.cpp's models/templates/ and their goldens rendered by Python Jinja2
// in transformers' environment.
const corpusDir = "testdata/corpus"

type corpusFile struct {
	Commit        string                     `json:"commit"`
	StrftimeNow   string                     `json:"strftime_now"`
	SpecialTokens map[string]string          `json:"special_tokens"`
	Tools         json.RawMessage            `json:"tools"`
	Conversations map[string]json.RawMessage `json:"conversations"`
	Templates     []corpusTemplate           `json:"templates"`
}

type corpusTemplate struct {
	File         string       `json:"file"`
	CompileError string       `json:"compile_error"`
	Cases        []corpusCase `json:"cases"`
}

type corpusCase struct {
	Name                string                     `json:"name"`
	Conversation        string                     `json:"conversation"`
	Tools               bool                       `json:"tools"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	Kwargs              map[string]json.RawMessage `json:"kwargs"`
	Expected            *string                    `json:"expected"`
	ExpectedError       string                     `json:"expected_error"`
	ExpectedErrorType   string                     `json:"expected_error_type"`
}

func loadCorpus(t testing.TB) *corpusFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "goldens.json"))
	if err != nil {
		t.Fatalf("corpus goldens (regenerate with scripts/gen_chat_corpus.py): %v", err)
	}
	var c corpusFile
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("goldens.json: %v", err)
	}
	if len(c.Templates) == 0 {
		t.Fatal("goldens.json: no templates")
	}
	return &c
}

// pinnedClock is the corpus' strftime_now instant (local time, as Python's
// naive datetime).
func (c *corpusFile) pinnedClock(t testing.TB) func() time.Time {
	at, err := time.ParseInLocation("2006-01-02T15:04:05", c.StrftimeNow, time.Local)
	if err != nil {
		t.Fatalf("strftime_now %q: %v", c.StrftimeNow, err)
	}
	return func() time.Time { return at }
}

func (c *corpusFile) input(cc corpusCase) Input {
	in := Input{Messages: c.Conversations[cc.Conversation], AddGenerationPrompt: cc.AddGenerationPrompt, Kwargs: map[string]any{}}
	if cc.Tools {
		in.Tools = c.Tools
	}
	for k, v := range c.SpecialTokens {
		in.Kwargs[k] = v
	}
	for k, v := range cc.Kwargs {
		in.Kwargs[k] = v
	}
	return in
}

// check renders one case and says what differs from the golden ("" when
// it matches).
func (c *corpusFile) check(tpl *Template, cc corpusCase) string {
	got, err := tpl.Render(context.Background(), c.input(cc))
	switch {
	case cc.ExpectedErrorType != "":
		// Python raised inside the template (TypeError, UndefinedError):
		// any render error matches.
		if err == nil {
			return fmt.Sprintf("want a render error (%s: %s), got output %q", cc.ExpectedErrorType, cc.ExpectedError, got)
		}
	case cc.ExpectedError != "":
		var te *TemplateError
		if !errors.As(err, &te) || te.Message != cc.ExpectedError {
			return fmt.Sprintf("want raise_exception(%q), got %v", cc.ExpectedError, err)
		}
	case err != nil:
		return fmt.Sprintf("render: %v", err)
	case cc.Expected == nil:
		return "golden has neither expected nor expected_error"
	case got != *cc.Expected:
		return fmt.Sprintf("mismatch at byte %d\n got: %q\nwant: %q", firstDiff(got, *cc.Expected), got, *cc.Expected)
	}
	return ""
}

func firstDiff(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestCorpus renders every case of the corpus and compares it byte for
// byte with Python Jinja2's output.
func TestCorpus(t *testing.T) {
	c := loadCorpus(t)
	clock := c.pinnedClock(t)
	templates, cases, passed := 0, 0, 0
	for _, ct := range c.Templates {
		if ct.CompileError != "" {
			continue
		}
		templates++
		t.Run(ct.File, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusDir, "templates", ct.File))
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := Compile(string(src))
			cases += len(ct.Cases)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			tpl.now = clock
			for _, cc := range ct.Cases {
				if diff := c.check(tpl, cc); diff != "" {
					t.Errorf("%s: %s", cc.Name, diff)
					continue
				}
				passed++
			}
		})
	}
	t.Logf("corpus (llama.cpp %s): %d templates, %d/%d cases byte-identical to Jinja2", c.Commit[:12], templates, passed, cases)
	if !strings.HasPrefix(c.Commit, "3f545bec") {
		t.Errorf("corpus commit %s, want the pinned 3f545bec", c.Commit)
	}
}

// BenchmarkCorpus renders every corpus case once per iteration.
func BenchmarkCorpus(b *testing.B) {
	c := loadCorpus(b)
	type compiled struct {
		tpl   *Template
		cases []corpusCase
	}
	var all []compiled
	for _, ct := range c.Templates {
		src, err := os.ReadFile(filepath.Join(corpusDir, "templates", ct.File))
		if err != nil {
			b.Fatal(err)
		}
		tpl, err := Compile(string(src))
		if err != nil {
			b.Fatalf("%s: %v", ct.File, err)
		}
		tpl.now = c.pinnedClock(b)
		all = append(all, compiled{tpl, ct.Cases})
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		for _, t := range all {
			for _, cc := range t.cases {
				_, _ = t.tpl.Render(ctx, c.input(cc))
			}
		}
	}
}

// BenchmarkCompileCorpus compiles every corpus template once per iteration.
func BenchmarkCompileCorpus(b *testing.B) {
	c := loadCorpus(b)
	var srcs []string
	for _, ct := range c.Templates {
		src, err := os.ReadFile(filepath.Join(corpusDir, "templates", ct.File))
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, string(src))
	}
	b.ResetTimer()
	for range b.N {
		for _, src := range srcs {
			if _, err := Compile(src); err != nil {
				b.Fatal(err)
			}
		}
	}
}
