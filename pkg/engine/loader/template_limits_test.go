package loader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors/sttest"
)

// withChatTemplate copies the stories260K fixture into a temporary GGUF
// whose tokenizer.chat_template is src.
func withChatTemplate(t *testing.T, src string) string {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, k := range f.Keys() {
		v, _ := f.Value(k)
		if err := w.SetValue(k, v); err != nil {
			t.Fatal(err)
		}
	}
	w.SetString("tokenizer.chat_template", src)
	for _, ti := range f.Tensors() {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "hostile.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTemplateBudgetFailsLoad: a chat template nested past the parse depth
// or over the size limit (a GGUF's tokenizer.chat_template, or a model
// directory's chat_template.jinja) fails the model's load with an error naming the
// model, where the template came from and the limit; a template that is
// only unsupported syntax leaves the model loaded, completions working and
// chat refused.
func TestTemplateBudgetFailsLoad(t *testing.T) {
	deep := "{{ " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000) + " }}"
	dir := hfDir(t, "qwen2-tiny-F32.gguf", sttest.Options{})
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, model, source, limit string }{
		{"gguf", withChatTemplate(t, deep), "GGUF metadata tokenizer.chat_template", "parse depth 256"},
		{"dir", dir, "chat_template.jinja", "parse depth 256"},
		{"gguf size", withChatTemplate(t, strings.Repeat("x", 2<<20)), "GGUF metadata tokenizer.chat_template", "source bytes 1048576"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newFilesManager(t)
			o := complete(context.Background(), m, engine.CompletionRequest{Model: c.model, Prompt: "x", Options: engine.Options{MaxTokens: 1}})
			if kindOf(o.err) != engine.KindBadRequest {
				t.Fatalf("error %v (kind %q), want a bad request", o.err, kindOf(o.err))
			}
			for _, want := range []string{c.model, c.source, c.limit} {
				if !strings.Contains(o.err.Error(), want) {
					t.Errorf("error %q does not name %q", o.err, want)
				}
			}
		})
	}

	model := withChatTemplate(t, "{% include 'other' %}")
	m := newFilesManager(t)
	if o := complete(context.Background(), m, engine.CompletionRequest{Model: model, Prompt: "x", Options: engine.Options{MaxTokens: 1}}); o.err != nil {
		t.Fatalf("a template with unsupported syntax: completion failed: %v", o.err)
	}
	_, err := m.Chat(context.Background(), engine.ChatRequest{Model: model, Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`),
		Options: engine.Options{MaxTokens: 1}}, func(engine.Delta) error { return nil })
	if kindOf(err) != engine.KindBadRequest || !strings.Contains(err.Error(), "no chat template") {
		t.Fatalf("chat with an unsupported template: %v, want it refused", err)
	}
}

// TestRenderBoundedByContext: a conversation whose rendering could never
// fit the context stops rendering at the context's byte bound and gets
// the context-length refusal; the same template within the bound renders.
func TestRenderBoundedByContext(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	m := newFilesManager(t)
	chat := func(content string) error {
		msgs, _ := json.Marshal([]map[string]string{{"role": "user", "content": content}})
		_, err := m.Chat(context.Background(), engine.ChatRequest{Model: model, Messages: msgs,
			Options: engine.Options{MaxTokens: 1}}, func(engine.Delta) error { return nil })
		return err
	}
	if err := chat("Once"); err != nil {
		t.Fatal(err)
	}
	err := chat(strings.Repeat("x", 8<<20))
	if kindOf(err) != engine.KindContextLength || !strings.Contains(err.Error(), "rendering the chat template wrote more than") {
		t.Fatalf("an 8 MiB message: %v (kind %q), want the render stopped with a context-length error", err, kindOf(err))
	}
}
