package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/engine"
)

// Message is one turn of the conversation, as sent to the chat template.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is the model's thinking for an assistant turn; it is saved
	// but not sent back (chat templates drop past reasoning anyway).
	Reasoning string `json:"reasoning_content,omitempty"`
}

// wireMessages is the messages array of a chat request: the system prompt
// (when set) and every turn, without reasoning.
func wireMessages(system string, msgs []Message) (json.RawMessage, error) {
	type wire struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	out := make([]wire, 0, len(msgs)+1)
	if system != "" {
		out = append(out, wire{"system", system})
	}
	for _, m := range msgs {
		out = append(out, wire{m.Role, m.Content})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the conversation: %w", err)
	}
	return b, nil
}

// SavedConversation is what /save writes.
type SavedConversation struct {
	Model          string         `json:"model"`
	System         string         `json:"system,omitempty"`
	Options        engine.Options `json:"options"`
	TemplateKwargs map[string]any `json:"template_kwargs,omitempty"`
	Messages       []Message      `json:"messages"`
}

// saveConversation writes c as indented JSON to path (temp file + rename).
func saveConversation(path string, c SavedConversation) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the conversation: %w", err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("saving to %s: %w", path, err)
		}
	}
	if err := fsutil.WriteFileAtomic(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving to %s: %w", path, err)
	}
	return nil
}
