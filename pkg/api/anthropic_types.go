package api

import (
	"encoding/json"
	"fmt"
)

// The Anthropic Messages API (POST /v1/messages): request and response
// types. Fields helexa does not use (metadata, cache_control,
// service_tier, …) are ignored, as the OpenAI routes ignore theirs.

// MessagesRequest is the body of POST /v1/messages and, without
// MaxTokens and Stream, of POST /v1/messages/count_tokens.
type MessagesRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	System        AnthropicText      `json:"system"`
	Messages      []AnthropicMessage `json:"messages"`
	Tools         []AnthropicTool    `json:"tools"`
	ToolChoice    *AnthropicToolUse  `json:"tool_choice"`
	Temperature   *float32           `json:"temperature"`
	TopP          *float32           `json:"top_p"`
	TopK          *int               `json:"top_k"`
	StopSequences []string           `json:"stop_sequences"`
	Stream        bool               `json:"stream"`
	Thinking      *AnthropicThinking `json:"thinking"`
	KeepAlive     *Duration          `json:"keep_alive"` // helexa's extension, as on the OpenAI routes
	NumCtx        int                `json:"num_ctx"`    // helexa's extension, as on the OpenAI routes
}

// AnthropicText is `system`: a string or a list of text blocks.
type AnthropicText struct {
	Text string
	Set  bool
}

// UnmarshalJSON accepts null, a string or a list of text blocks (joined
// by newlines).
func (t *AnthropicText) UnmarshalJSON(b []byte) error {
	*t = AnthropicText{}
	if string(b) == "null" {
		return nil
	}
	if json.Unmarshal(b, &t.Text) == nil {
		t.Set = true
		return nil
	}
	var blocks []AnthropicBlock
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("system must be a string or a list of text blocks")
	}
	for i, bl := range blocks {
		if bl.Type != "text" {
			return fmt.Errorf("system[%d] has type %q; system blocks must be text", i, bl.Type)
		}
		if i > 0 {
			t.Text += "\n"
		}
		t.Text += bl.Text
	}
	t.Set = true
	return nil
}

// AnthropicMessage is one turn of `messages`.
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content AnthropicContent `json:"content"`
}

// AnthropicContent is a message's content: a string (one text block) or
// a list of blocks.
type AnthropicContent []AnthropicBlock

// UnmarshalJSON accepts a string or a list of blocks.
func (c *AnthropicContent) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = AnthropicContent{{Type: "text", Text: s}}
		return nil
	}
	var blocks []AnthropicBlock
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("content must be a string or a list of content blocks")
	}
	*c = blocks
	return nil
}

// AnthropicBlock is a content block of a request: text, image, tool_use,
// tool_result, thinking or redacted_thinking.
type AnthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result: Content is a string or a list of text blocks.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	// thinking
	Thinking string `json:"thinking"`
}

// AnthropicTool is a tool definition (a client tool: name, description,
// input_schema).
type AnthropicTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// AnthropicToolUse is `tool_choice`: auto, any, tool (with Name) or none.
type AnthropicToolUse struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// AnthropicThinking is `thinking`: {"type":"enabled","budget_tokens":N}
// or {"type":"disabled"}.
type AnthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// MessageBlock is a content block of a response (and of a stream's
// content_block_start): text, thinking or tool_use.
type MessageBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// MessagesResponse is a message: the non-streamed answer, and the
// `message` of a stream's message_start.
type MessagesResponse struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"` // "message"
	Role         string         `json:"role"` // "assistant"
	Model        string         `json:"model"`
	Content      []MessageBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        AnthropicUsage `json:"usage"`
}

// AnthropicUsage counts tokens as Anthropic does: InputTokens are the
// prompt tokens computed for this request, CacheReadInputTokens those
// reused from the prefix cache (their sum is the whole prompt).
type AnthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// CountTokensResponse is the answer of POST /v1/messages/count_tokens.
type CountTokensResponse struct {
	InputTokens int `json:"input_tokens"`
}

// AnthropicError is an error in Anthropic's shape.
type AnthropicError struct {
	Type  string             `json:"type"` // "error"
	Error AnthropicErrorBody `json:"error"`
}

// AnthropicErrorBody is the inside of an AnthropicError.
type AnthropicErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Stream events (each an SSE event named by its Type).

type messageStartEvent struct {
	Type    string           `json:"type"`
	Message MessagesResponse `json:"message"`
}

type contentBlockStartEvent struct {
	Type         string       `json:"type"`
	Index        int          `json:"index"`
	ContentBlock MessageBlock `json:"content_block"`
}

type contentBlockDeltaEvent struct {
	Type  string     `json:"type"`
	Index int        `json:"index"`
	Delta blockDelta `json:"delta"`
}

// blockDelta is a content_block_delta's delta: text_delta (Text),
// thinking_delta (Thinking) or input_json_delta (PartialJSON).
type blockDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type contentBlockStopEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type messageDeltaEvent struct {
	Type  string         `json:"type"`
	Delta messageDelta   `json:"delta"`
	Usage AnthropicUsage `json:"usage"`
}

type messageDelta struct {
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type typeOnlyEvent struct {
	Type string `json:"type"`
}
