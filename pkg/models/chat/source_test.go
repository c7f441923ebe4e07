package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

func TestFromTokenizerConfig(t *testing.T) {
	const tpl = `{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}`
	str, _ := json.Marshal(tpl)
	cases := []struct {
		name, config, want string
		wantErr            error
	}{
		{"string", `{"chat_template": ` + string(str) + `, "bos_token": "<s>", "eos_token": {"content": "</s>", "lstrip": false}}`, "<s>hi</s>", nil},
		{"named list", `{"chat_template": [{"name": "tool_use", "template": "x"}, {"name": "default", "template": ` + string(str) + `}], "eos_token": "E"}`, "hiE", nil},
		{"no default", `{"chat_template": [{"name": "tool_use", "template": "x"}]}`, "", ErrNoTemplate},
		{"missing", `{"bos_token": "<s>"}`, "", ErrNoTemplate},
		{"null", `{"chat_template": null}`, "", ErrNoTemplate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp, err := FromTokenizerConfig([]byte(c.config))
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("want %v, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tp.Render(context.Background(), Input{Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`)})
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{`{`, `{"chat_template": 3}`, `{"chat_template": "{% if %}"}`} {
		if _, err := FromTokenizerConfig([]byte(bad)); err == nil || errors.Is(err, ErrNoTemplate) {
			t.Errorf("%s: want a parse error, got %v", bad, err)
		}
	}
}

// TestFromGGUFGoldens renders the goldens with the templates stored in the
// fixture vocabularies, taking bos_token/eos_token from the vocab instead of
// the fixture kwargs.
func TestFromGGUFGoldens(t *testing.T) {
	for vocab, golden := range map[string]string{"vocab-qwen3.gguf": "qwen3.json", "vocab-llama3.gguf": "llama3_1.json"} {
		f, err := gguf.Open(fixtures.Path(t, "tokenizer", vocab))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tpl, err := FromGGUF(f, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		rendered := 0
		for _, c := range loadGoldens(t, golden) {
			if c.Expected == nil {
				continue
			}
			if tpl.Source() != c.Template {
				t.Fatalf("%s: template differs from %s", vocab, golden)
			}
			rendered++
			in := goldenInput(t, c)
			delete(in.Kwargs, "bos_token")
			delete(in.Kwargs, "eos_token")
			got, err := tpl.Render(context.Background(), in)
			if err != nil || got != *c.Expected {
				t.Errorf("%s/%s: got %q, %v\nwant %q", vocab, c.Name, got, err, *c.Expected)
			}
		}
		if rendered == 0 {
			t.Errorf("%s: no golden rendered", golden)
		}
	}
}

func TestFromGGUFFallback(t *testing.T) {
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})
	w.SetUint32("tokenizer.ggml.bos_token_id", 1)
	w.SetUint32("tokenizer.ggml.eos_token_id", 2)
	path := filepath.Join(t.TempDir(), "no-template.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var logs bytes.Buffer
	tpl, err := FromGGUF(f, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Source() != ChatML || !strings.Contains(logs.String(), "ChatML") {
		t.Fatalf("want the ChatML fallback with a log line, got log %q", logs.String())
	}
	probe, err := Compile(`{{ bos_token }}|{{ eos_token }}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := probe.WithDefaults(specialTokenDefaults(f)).Render(context.Background(), Input{})
	if err != nil || got != "<s>|</s>" {
		t.Fatalf("special token defaults: got %q, %v", got, err)
	}
}

// TestFromGGUFVocabs: phi-3's stored template renders with the vocab's BOS;
// a vocabulary without a template (gpt-2) falls back to ChatML.
func TestFromGGUFVocabs(t *testing.T) {
	msgs := json.RawMessage(`[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"},{"role":"user","content":"Q"}]`)
	cases := map[string]string{
		"ggml-vocab-phi-3.gguf": "<s><|user|>\nHi<|end|>\n<|assistant|>\nYo<|end|>\n<|user|>\nQ<|end|>\n<|assistant|>\n",
		"ggml-vocab-gpt-2.gguf": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n",
	}
	for vocab, want := range cases {
		f, err := gguf.Open(fixtures.Path(t, "tokenizer", vocab))
		if err != nil {
			t.Fatal(err)
		}
		tpl, err := FromGGUF(f, slog.New(slog.DiscardHandler))
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", vocab, err)
		}
		got, err := tpl.Render(context.Background(), Input{Messages: msgs})
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", vocab, got, err, want)
		}
	}
}

// TestFromDir: a Hugging Face model directory's template comes from
// tokenizer_config.json, else chat_template.jinja, else chat_template.json;
// bos_token / eos_token from tokenizer_config.json in every case.
func TestFromDir(t *testing.T) {
	const tpl = `{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}`
	quoted, _ := json.Marshal(tpl)
	cfg := `{"bos_token": "<s>", "eos_token": {"content": "</s>"}}`
	cases := []struct {
		name    string
		files   map[string]string
		want    string
		wantErr error
	}{
		{"tokenizer_config", map[string]string{"tokenizer_config.json": `{"chat_template": ` + string(quoted) + `, "bos_token": "B"}`,
			"chat_template.jinja": "ignored"}, "Bhi", nil},
		{"chat_template.jinja", map[string]string{"tokenizer_config.json": cfg, "chat_template.jinja": tpl}, "<s>hi</s>", nil},
		{"chat_template.json", map[string]string{"tokenizer_config.json": cfg, "chat_template.json": `{"chat_template": ` + string(quoted) + `}`}, "<s>hi</s>", nil},
		{"jinja without config", map[string]string{"chat_template.jinja": tpl}, "hi", nil},
		{"nothing", map[string]string{"tokenizer_config.json": cfg}, "", ErrNoTemplate},
		{"empty dir", nil, "", ErrNoTemplate},
		{"bad config", map[string]string{"tokenizer_config.json": `{`, "chat_template.jinja": tpl}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tp, err := FromDir(dir)
			if c.want == "" {
				if err == nil || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
					t.Fatalf("want error %v, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tp.Render(context.Background(), Input{Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`)})
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
