package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/helexa/helexa/pkg/models/gguf"
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
		return nil, fmt.Errorf("%s: %w", f.Path(), err)
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
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
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
	defaults := map[string]any{}
	for kw, raw := range map[string]json.RawMessage{"bos_token": cfg.BOS, "eos_token": cfg.EOS} {
		if s, ok := addedTokenContent(raw); ok {
			defaults[kw] = s
		}
	}
	return t.WithDefaults(defaults), nil
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
