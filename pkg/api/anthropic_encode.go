package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/helexa/helexa/pkg/engine"
)

// namedEvent is one event of a Messages stream: its SSE event name and
// its data (whose "type" is the same name).
type namedEvent struct {
	name string
	data any
}

// messageEncoder turns the engine's deltas into the content-block events
// of a Messages stream: consecutive reasoning is one thinking block,
// consecutive content one text block, each tool call a tool_use block of
// its own, in the order the model wrote them.
type messageEncoder struct {
	open string // "text" or "thinking": the block still taking deltas; "" none
	next int    // the index of the open block, or of the next one
}

// delta returns the events that carry d.
func (e *messageEncoder) delta(d engine.Delta) []namedEvent {
	var out []namedEvent
	if d.Reasoning != "" {
		out = e.into(out, "thinking")
		out = append(out, blockDeltaEvent(e.next, blockDelta{Type: "thinking_delta", Thinking: ptr(d.Reasoning)}))
	}
	if d.Content != "" {
		out = e.into(out, "text")
		out = append(out, blockDeltaEvent(e.next, blockDelta{Type: "text_delta", Text: ptr(d.Content)}))
	}
	for _, c := range d.ToolCalls {
		out = e.close(out)
		out = append(out,
			namedEvent{"content_block_start", contentBlockStartEvent{Type: "content_block_start", Index: e.next,
				ContentBlock: MessageBlock{Type: "tool_use", ID: toolUseID(c.ID), Name: c.Name, Input: json.RawMessage("{}")}}},
			blockDeltaEvent(e.next, blockDelta{Type: "input_json_delta", PartialJSON: ptr(toolInput(c.Arguments))}),
			namedEvent{"content_block_stop", contentBlockStopEvent{Type: "content_block_stop", Index: e.next}})
		e.next++
	}
	return out
}

// end closes the open block.
func (e *messageEncoder) end() []namedEvent { return e.close(nil) }

// into makes a block of kind the open one, closing another first.
func (e *messageEncoder) into(out []namedEvent, kind string) []namedEvent {
	if e.open == kind {
		return out
	}
	out = e.close(out)
	e.open = kind
	block := MessageBlock{Type: kind, Text: ptr("")}
	if kind == "thinking" {
		block = MessageBlock{Type: kind, Thinking: ptr(""), Signature: ptr("")}
	}
	return append(out, namedEvent{"content_block_start", contentBlockStartEvent{Type: "content_block_start", Index: e.next, ContentBlock: block}})
}

// close ends the open block, if any.
func (e *messageEncoder) close(out []namedEvent) []namedEvent {
	if e.open == "" {
		return out
	}
	out = append(out, namedEvent{"content_block_stop", contentBlockStopEvent{Type: "content_block_stop", Index: e.next}})
	e.open = ""
	e.next++
	return out
}

func blockDeltaEvent(index int, d blockDelta) namedEvent {
	return namedEvent{"content_block_delta", contentBlockDeltaEvent{Type: "content_block_delta", Index: index, Delta: d}}
}

// messageAssembler builds a message's content from its events, as a
// client accumulates a stream: the non-streamed answer is exactly what the
// stream would have carried.
type messageAssembler struct {
	blocks []MessageBlock
	json   map[int]*strings.Builder // a tool_use block's input so far
}

func (a *messageAssembler) apply(events []namedEvent) {
	for _, ev := range events {
		switch d := ev.data.(type) {
		case contentBlockStartEvent:
			b := d.ContentBlock
			b.Text, b.Thinking = clonePtr(b.Text), clonePtr(b.Thinking)
			a.blocks = append(a.blocks, b)
		case contentBlockDeltaEvent:
			a.applyDelta(&a.blocks[d.Index], d.Index, d.Delta)
		case contentBlockStopEvent:
			if sb, ok := a.json[d.Index]; ok {
				a.blocks[d.Index].Input = json.RawMessage(sb.String())
			}
		}
	}
}

func (a *messageAssembler) applyDelta(b *MessageBlock, index int, d blockDelta) {
	switch {
	case d.Text != nil && b.Text != nil:
		*b.Text += *d.Text
	case d.Thinking != nil && b.Thinking != nil:
		*b.Thinking += *d.Thinking
	case d.PartialJSON != nil:
		if a.json == nil {
			a.json = map[int]*strings.Builder{}
		}
		if a.json[index] == nil {
			a.json[index] = &strings.Builder{}
		}
		a.json[index].WriteString(*d.PartialJSON)
	}
}

// content returns the assembled blocks (never nil: `content` is a list).
func (a *messageAssembler) content() []MessageBlock {
	if a.blocks == nil {
		return []MessageBlock{}
	}
	return a.blocks
}

func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

// toolUseID is the Anthropic-style id (toolu_…) of an engine tool call.
func toolUseID(id string) string {
	if strings.HasPrefix(id, "toolu_") {
		return id
	}
	return "toolu_" + strings.TrimPrefix(id, "call_")
}

// toolInput is a tool call's arguments as a tool_use input, which must be
// a JSON object: arguments that are not one (a model's malformed call)
// are kept whole as the string field "arguments".
func toolInput(args string) string {
	var obj map[string]json.RawMessage
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return args
	}
	b, _ := json.Marshal(map[string]string{"arguments": args})
	return string(b)
}

// stopReason maps the engine's finish reason to Anthropic's stop_reason
// (and the stop sequence that ended the answer, if one did).
func stopReason(res engine.Result) (*string, *string) {
	switch res.FinishReason {
	case "length":
		return ptr("max_tokens"), nil
	case "tool_calls":
		return ptr("tool_use"), nil
	}
	if res.StopSequence != "" {
		return ptr("stop_sequence"), ptr(res.StopSequence)
	}
	return ptr("end_turn"), nil
}

// anthropicUsage converts engine usage: the prompt tokens reused from the
// prefix cache are cache reads, the rest input.
func anthropicUsage(u engine.Usage) AnthropicUsage {
	return AnthropicUsage{
		InputTokens:          u.PromptTokens - u.CachedTokens,
		CacheReadInputTokens: u.CachedTokens,
		OutputTokens:         u.CompletionTokens,
	}
}

// anthropicErrorType is Anthropic's error type for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// anthropicError is an error body in Anthropic's shape.
func anthropicError(status int, body ErrorBody) AnthropicError {
	return AnthropicError{Type: "error", Error: AnthropicErrorBody{Type: anthropicErrorType(status), Message: body.Message}}
}

// isAnthropicPath reports a path of the Messages API, whose errors are
// in Anthropic's shape.
func isAnthropicPath(path string) bool {
	return path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/")
}

// event writes one named SSE event (`event:` and `data:` lines).
func (w *sseWriter) event(ev namedEvent) error { return w.sendNamed(ev.name, ev.data) }
