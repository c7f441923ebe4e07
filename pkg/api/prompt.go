package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Prompt is /v1/completions' prompt as OpenAI defines it: a string, a list
// of strings (one choice each), a list of token ids, or a list of such
// lists.
type Prompt struct {
	Texts  []string
	Tokens [][]int32
}

// TextPrompt is a prompt of one string.
func TextPrompt(s string) Prompt { return Prompt{Texts: []string{s}} }

// Len is the number of prompts (choices).
func (p Prompt) Len() int { return len(p.Texts) + len(p.Tokens) }

// MarshalJSON implements json.Marshaler (a single text as a plain string).
func (p Prompt) MarshalJSON() ([]byte, error) {
	switch {
	case len(p.Tokens) == 1 && len(p.Texts) == 0:
		return json.Marshal(p.Tokens[0])
	case len(p.Tokens) > 0:
		return json.Marshal(p.Tokens)
	case len(p.Texts) == 1:
		return json.Marshal(p.Texts[0])
	}
	return json.Marshal(p.Texts)
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*p = Prompt{}
	var s string
	if json.Unmarshal(b, &s) == nil {
		p.Texts = []string{s}
		return nil
	}
	var raw []json.RawMessage
	if json.Unmarshal(b, &raw) == nil && len(raw) == 0 {
		return fmt.Errorf("prompt is an empty list; send a string, strings or token ids")
	}
	var texts []string
	if json.Unmarshal(b, &texts) == nil && len(texts) > 0 {
		p.Texts = texts
		return nil
	}
	var ids []int32
	if json.Unmarshal(b, &ids) == nil && len(ids) > 0 {
		p.Tokens = [][]int32{ids}
		return nil
	}
	var lists [][]int32
	if json.Unmarshal(b, &lists) == nil && len(lists) > 0 {
		for i, l := range lists {
			if len(l) == 0 {
				return fmt.Errorf("prompt[%d] is an empty list of token ids", i)
			}
		}
		p.Tokens = lists
		return nil
	}
	return fmt.Errorf("prompt must be a string, a list of strings, a list of token ids or a list of such lists")
}

// EmbeddingInput is /v1/embeddings' input: the same shapes as a Prompt,
// with errors that name the field the client sent.
type EmbeddingInput struct{ Prompt }

// UnmarshalJSON implements json.Unmarshaler.
func (in *EmbeddingInput) UnmarshalJSON(b []byte) error {
	if err := in.Prompt.UnmarshalJSON(b); err != nil {
		return errors.New(strings.Replace(err.Error(), "prompt", "input", 1))
	}
	return nil
}
