package api

import "encoding/json"

// The OpenAI Responses API on the wire (POST /v1/responses): the request,
// the response object with its output items, and the streamed events.

// ResponsesRequest is the body of POST /v1/responses. The shared
// generation fields (temperature, top_p and helexa's extensions) come from
// GenerationParams; max_output_tokens caps the answer.
type ResponsesRequest struct {
	Model string `json:"model"`
	// Input is a string (one user message) or a list of input items.
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions,omitempty"`
	Tools              json.RawMessage `json:"tools,omitempty"`
	ToolChoice         json.RawMessage `json:"tool_choice,omitempty"`
	Text               *TextConfig     `json:"text,omitempty"`
	MaxOutputTokens    *int            `json:"max_output_tokens,omitempty"`
	Reasoning          *ReasoningParam `json:"reasoning,omitempty"`
	PreviousResponseID string          `json:"previous_response_id,omitempty"`
	// Store keeps the response for GET and previous_response_id
	// (default true).
	Store             *bool             `json:"store,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	// Refused: helexa has no background jobs, server-side conversations
	// or prompt templates.
	Background   bool            `json:"background,omitempty"`
	Conversation json.RawMessage `json:"conversation,omitempty"`
	Prompt       json.RawMessage `json:"prompt,omitempty"`
	// ChatTemplateKwargs (an extension, as on chat completions) are extra
	// chat-template variables; reasoning.effort fills enable_thinking when
	// they do not set it.
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
	GenerationParams
}

// TextConfig is the `text` object: the output format.
type TextConfig struct {
	Format *TextFormat `json:"format,omitempty"`
}

// TextFormat is `text.format`: text, json_object or json_schema.
type TextFormat struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// ReasoningParam is the `reasoning` object of a request and a response.
type ReasoningParam struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// Response is a Responses API response object.
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"` // "response"
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"` // in_progress, completed, incomplete, failed
	Error              *ResponseError     `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []OutputItem       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          ReasoningParam     `json:"reasoning"`
	Store              bool               `json:"store"`
	Temperature        *float32           `json:"temperature"`
	Text               TextConfig         `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              json.RawMessage    `json:"tools"`
	TopP               *float32           `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *ResponseUsage     `json:"usage"`
	Metadata           map[string]string  `json:"metadata"`
}

// ResponseError is a failed response's `error`.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete.
type IncompleteDetails struct {
	Reason string `json:"reason"` // max_output_tokens
}

// ResponseUsage is a response's `usage`.
type ResponseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

// InputTokensDetails reports input tokens served from the prefix cache.
type InputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputTokensDetails reports output tokens spent reasoning.
type OutputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// Output item types.
const (
	itemMessage      = "message"
	itemReasoning    = "reasoning"
	itemFunctionCall = "function_call"
)

// OutputItem is one item of a response's output: a message (Role and
// output_text Content), a reasoning item (reasoning_text Content and an
// always-empty Summary) or a function call (CallID, Name, Arguments).
type OutputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status,omitempty"`
	Role      string        `json:"role,omitempty"`
	Content   []ContentPart `json:"content,omitzero"`
	Summary   []ContentPart `json:"summary,omitzero"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
}

// ContentPart is an output_text part of a message or a reasoning_text
// part of a reasoning item.
type ContentPart struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations,omitzero"`
	Logprobs    []json.RawMessage `json:"logprobs,omitzero"`
}

// eventHead starts every streamed event.
type eventHead struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
}

// responseEvent is response.created, .in_progress, .completed,
// .incomplete or .failed.
type responseEvent struct {
	eventHead
	Response *Response `json:"response"`
}

// itemEvent is response.output_item.added or .done.
type itemEvent struct {
	eventHead
	OutputIndex int        `json:"output_index"`
	Item        OutputItem `json:"item"`
}

// partEvent is response.content_part.added or .done.
type partEvent struct {
	eventHead
	ItemID       string      `json:"item_id"`
	OutputIndex  int         `json:"output_index"`
	ContentIndex int         `json:"content_index"`
	Part         ContentPart `json:"part"`
}

// textEvent is response.output_text.delta / .done or
// response.reasoning_text.delta / .done (Delta, or Text when done).
type textEvent struct {
	eventHead
	ItemID       string            `json:"item_id"`
	OutputIndex  int               `json:"output_index"`
	ContentIndex int               `json:"content_index"`
	Delta        *string           `json:"delta,omitempty"`
	Text         *string           `json:"text,omitempty"`
	Logprobs     []json.RawMessage `json:"logprobs,omitzero"`
}

// argsEvent is response.function_call_arguments.delta (Delta) or .done
// (Name and Arguments).
type argsEvent struct {
	eventHead
	ItemID      string  `json:"item_id"`
	OutputIndex int     `json:"output_index"`
	Delta       *string `json:"delta,omitempty"`
	Name        string  `json:"name,omitempty"`
	Arguments   *string `json:"arguments,omitempty"`
}

// DeletedResponse answers DELETE /v1/responses/{id}.
type DeletedResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response.deleted"
	Deleted bool   `json:"deleted"`
}
