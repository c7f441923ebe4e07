package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

func runTemplateCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	root.SetArgs(append([]string{"debug", "template"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

type templateGolden struct {
	Name     string                     `json:"name"`
	Template string                     `json:"template"`
	Messages json.RawMessage            `json:"messages"`
	Tools    json.RawMessage            `json:"tools"`
	Kwargs   map[string]json.RawMessage `json:"kwargs"`
	Expected *string                    `json:"expected"`
}

// TestDebugTemplateGoldens renders every non-error golden through the CLI,
// from --template, and the first one also from the fixture GGUF vocabulary.
func TestDebugTemplateGoldens(t *testing.T) {
	for golden, vocab := range map[string]string{"qwen3.json": "vocab-qwen3.gguf", "llama3_1.json": "vocab-llama3.gguf"} {
		data, err := os.ReadFile(fixtures.Path(t, "templates", golden))
		if err != nil {
			t.Fatal(err)
		}
		var cases []templateGolden
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatal(err)
		}
		model := fixtures.Path(t, "tokenizer", vocab)
		for i, c := range cases {
			if c.Expected == nil {
				continue
			}
			dir := t.TempDir()
			tplFile := filepath.Join(dir, "t.jinja")
			msgFile := filepath.Join(dir, "m.json")
			toolsFile := filepath.Join(dir, "tools.json")
			kwargs, _ := json.Marshal(c.Kwargs)
			for p, b := range map[string][]byte{tplFile: []byte(c.Template), msgFile: c.Messages, toolsFile: c.Tools} {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			common := []string{"--messages", msgFile, "--tools", toolsFile, "--kwargs", string(kwargs)}
			sources := [][]string{{"--template", tplFile}}
			if i == 0 { // opening the vocabulary is slow: once per file
				sources = append(sources, []string{model})
			}
			for _, src := range sources {
				got, err := runTemplateCmd(t, "", append(src, common...)...)
				if err != nil || got != *c.Expected {
					t.Errorf("%s %v: got %q, %v\nwant %q", c.Name, src, got, err, *c.Expected)
				}
			}
		}
	}
}

func TestDebugTemplateFlags(t *testing.T) {
	dir := t.TempDir()
	tplFile := filepath.Join(dir, "t.jinja")
	os.WriteFile(tplFile, []byte(`{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}>{% endif %}{{ x }}`), 0o644)
	got, err := runTemplateCmd(t, `[{"role":"user","content":"hi\n"}]`, "--template", tplFile, "--messages", "-", "--add-generation-prompt", "--kwargs", `{"x": "!"}`)
	if err != nil || got != "hi\n>!" {
		t.Fatalf("got %q, %v", got, err)
	}
	bad := map[string][]string{
		"no source":       {"--messages", "-"},
		"both sources":    {"model.gguf", "--template", tplFile, "--messages", "-"},
		"no messages":     {"--template", tplFile},
		"bad kwargs":      {"--template", tplFile, "--messages", "-", "--kwargs", "[1]"},
		"missing model":   {filepath.Join(dir, "nope.gguf"), "--messages", "-"},
		"not json":        {"--template", tplFile, "--messages", tplFile},
		"not a gguf file": {tplFile, "--messages", "-"},
	}
	for name, args := range bad {
		if out, err := runTemplateCmd(t, `[]`, args...); err == nil {
			t.Errorf("%s: want an error, got %q", name, out)
		}
	}
}

// TestDebugTemplateSources: MODEL may be a model directory (template in
// tokenizer_config.json or chat_template.jinja) or a tokenizer_config.json;
// one without a template says how to give one.
func TestDebugTemplateSources(t *testing.T) {
	dir := t.TempDir()
	msgs := filepath.Join(dir, "m.json")
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(msgs, `[{"role":"user","content":"hi"}]`)
	withJinja := filepath.Join(dir, "jinja")
	os.Mkdir(withJinja, 0o755)
	write(filepath.Join(withJinja, "tokenizer_config.json"), `{"bos_token": "<s>"}`)
	write(filepath.Join(withJinja, "chat_template.jinja"), `{{ bos_token }}{{ messages[0].content }}`)
	withConfig := filepath.Join(dir, "config")
	os.Mkdir(withConfig, 0o755)
	write(filepath.Join(withConfig, "tokenizer_config.json"), `{"chat_template": "[{{ messages[0].content }}]"}`)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	for _, tc := range []struct{ model, want string }{
		{withJinja, "<s>hi"},
		{withConfig, "[hi]"},
		{filepath.Join(withConfig, "tokenizer_config.json"), "[hi]"},
	} {
		got, err := runTemplateCmd(t, "", tc.model, "--messages", msgs)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.model, got, err, tc.want)
		}
	}
	_, err := runTemplateCmd(t, "", empty, "--messages", msgs)
	if err == nil || !strings.Contains(err.Error(), "no chat_template") || !strings.Contains(err.Error(), "--template") {
		t.Errorf("directory without a template: %v", err)
	}
	_, err = runTemplateCmd(t, "[]", "--template", filepath.Join(withJinja, "chat_template.jinja"), "--messages", "-", "--tools", "-")
	if err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Errorf("--messages - --tools -: %v", err)
	}
}
