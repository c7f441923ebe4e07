package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
)

// ErrNoTemplate says a tokenizer_config.json carries no chat template.
var ErrNoTemplate = errors.New("no chat_template in tokenizer config")

// GGUF metadata keys read here.
const (
	keyChatTemplate = "tokenizer.chat_template"
	keyTokens       = "tokenizer.ggml.tokens"
	keyBOS          = "tokenizer.ggml.bos_token_id"
	keyEOS          = "tokenizer.ggml.eos_token_id"
)

// FromGGUF compiles the model's tokenizer.chat_template, falling back to
// ChatML (with a log line saying so) when the file has none. bos_token and
// eos_token default to the vocabulary's BOS/EOS token strings.
func FromGGUF(f *gguf.File, log *slog.Logger) (*Template, error) {
	if log == nil {
		log = slog.Default()
	}
	src, err := f.String(keyChatTemplate)
	if err != nil || strings.TrimSpace(src) == "" {
		log.Info("model has no chat template; using ChatML", "path", f.Path(), "key", keyChatTemplate)
		src = ChatML
	}
	t, err := Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%s: GGUF metadata %s: %w", f.Path(), keyChatTemplate, err)
	}
	return t.WithDefaults(specialTokenDefaults(f)), nil
}

// FromGGUFWith compiles src (a template given instead of the model's own,
// HELEXA_CHAT_TEMPLATE) with the model's BOS/EOS token strings as
// bos_token and eos_token defaults, as FromGGUF does.
func FromGGUFWith(f *gguf.File, src string) (*Template, error) {
	t, err := Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat template override: %w", err)
	}
	return t.WithDefaults(specialTokenDefaults(f)), nil
}

// specialTokenDefaults looks up the BOS and EOS token strings.
func specialTokenDefaults(f *gguf.File) map[string]any {
	out := map[string]any{}
	tokens, err := f.Strings(keyTokens)
	if err != nil {
		return out
	}
	for kw, key := range map[string]string{"bos_token": keyBOS, "eos_token": keyEOS} {
		id, err := f.Uint(key)
		if err == nil && id < uint64(len(tokens)) {
			out[kw] = tokens[id]
		}
	}
	return out
}

// FromTokenizerConfig compiles chat_template from a Hugging Face
// tokenizer_config.json: a string, or a list of {name, template} from which
// "default" is taken. bos_token and eos_token (strings or AddedToken
// objects) become kwargs defaults. A config without a template gives
// ErrNoTemplate.
func FromTokenizerConfig(data []byte) (*Template, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer_config.json: %w", err)
	}
	src, err := pickTemplate(cfg.ChatTemplate)
	if err != nil {
		return nil, err
	}
	t, err := Compile(src)
	if err != nil {
		return nil, err
	}
	return t.WithDefaults(specialTokenStrings(data)), nil
}

// FromDir compiles the chat template of a Hugging Face model directory:
// chat_template in tokenizer_config.json, else the chat_template.jinja file
// newer transformers versions save beside it, else chat_template.json
// ({"chat_template": ...}). bos_token and eos_token come from
// tokenizer_config.json when it exists. A directory with none of these gives
// ErrNoTemplate. Each file is read as fsutil.ReadRegular does (a regular
// file only, opened without blocking, within the caps of
// pkg/models/safetensors); a compile error names the file it came from.
func FromDir(dir string) (*Template, error) {
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	cfg, err := fsutil.ReadRegular(cfgPath, safetensors.MaxTokenizerConfigBytes)
	switch {
	case err == nil:
		t, err := FromTokenizerConfig(cfg)
		if !errors.Is(err, ErrNoTemplate) {
			return t, sourceError(cfgPath, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	path, src, err := templateFile(dir)
	if err != nil {
		return nil, err
	}
	t, err := Compile(src)
	if err != nil {
		return nil, sourceError(path, err)
	}
	return t.WithDefaults(specialTokenStrings(cfg)), nil
}

// sourceError names the file a template came from in its compile error.
func sourceError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", path, err)
}

// templateFile reads dir/chat_template.jinja, or else the template in
// dir/chat_template.json, and returns the path it read with the source.
func templateFile(dir string) (string, string, error) {
	path := filepath.Join(dir, "chat_template.jinja")
	src, err := fsutil.ReadRegular(path, safetensors.MaxTemplateBytes)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return path, string(src), err
	}
	path = filepath.Join(dir, "chat_template.json")
	raw, err := fsutil.ReadRegular(path, safetensors.MaxTemplateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s: %w, and no chat_template.jinja", dir, ErrNoTemplate)
	}
	if err != nil {
		return "", "", err
	}
	var doc struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", "", fmt.Errorf("chat_template.json: %w", err)
	}
	tpl, err := pickTemplate(doc.ChatTemplate)
	return path, tpl, err
}

// specialTokenStrings reads bos_token and eos_token from a
// tokenizer_config.json.
func specialTokenStrings(cfg []byte) map[string]any {
	var tok struct {
		BOS json.RawMessage `json:"bos_token"`
		EOS json.RawMessage `json:"eos_token"`
	}
	defaults := map[string]any{}
	if json.Unmarshal(cfg, &tok) != nil {
		return defaults
	}
	for kw, raw := range map[string]json.RawMessage{"bos_token": tok.BOS, "eos_token": tok.EOS} {
		if s, ok := addedTokenContent(raw); ok {
			defaults[kw] = s
		}
	}
	return defaults
}

func pickTemplate(raw json.RawMessage) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", ErrNoTemplate
	}
	var src string
	if json.Unmarshal(raw, &src) == nil {
		return src, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("tokenizer_config.json: chat_template must be a string or a list of {name, template}: %w", err)
	}
	var names []string
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
		names = append(names, n.Name)
	}
	return "", fmt.Errorf("%w: no template named \"default\" among %q", ErrNoTemplate, names)
}

// addedTokenContent reads a special token given as "str" or {"content": "str"}.
func addedTokenContent(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, true
	}
	return "", false
}
