package api

import (
	"encoding/json"

	"github.com/helexa/helexa/pkg/engine"
)

// Streamed event types of the Responses API.
const (
	evCreated        = "response.created"
	evInProgress     = "response.in_progress"
	evCompleted      = "response.completed"
	evIncomplete     = "response.incomplete"
	evFailed         = "response.failed"
	evItemAdded      = "response.output_item.added"
	evItemDone       = "response.output_item.done"
	evPartAdded      = "response.content_part.added"
	evPartDone       = "response.content_part.done"
	evTextDelta      = "response.output_text.delta"
	evTextDone       = "response.output_text.done"
	evReasoningDelta = "response.reasoning_text.delta"
	evReasoningDone  = "response.reasoning_text.done"
	evArgsDelta      = "response.function_call_arguments.delta"
	evArgsDone       = "response.function_call_arguments.done"
)

// Item and response states.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusIncomplete = "incomplete"
	statusFailed     = "failed"
)

// responseEncoder builds a response's output items from the engine's
// deltas (reasoning text, message text, whole tool calls, in the order the
// model writes them) and, when emit is set, streams them as Responses
// events numbered by sequence_number. The non-streamed response is the
// same encoder without emit, so both carry the same output.
type responseEncoder struct {
	resp *Response
	// emit sends one event; it must encode v before it returns (v points
	// into the response being built).
	emit            func(event string, v any) error
	seq             int
	started         bool
	open            int // the index of the open reasoning or message item; -1 = none
	reasoningTokens int
}

func newResponseEncoder(resp *Response, emit func(event string, v any) error) *responseEncoder {
	return &responseEncoder{resp: resp, emit: emit, open: -1}
}

// send emits one event unless the encoder does not stream.
func (e *responseEncoder) send(event string, v any) error {
	if e.emit == nil {
		return nil
	}
	return e.emit(event, v)
}

// head numbers the next event.
func (e *responseEncoder) head(event string) eventHead {
	h := eventHead{Type: event, SequenceNumber: e.seq}
	e.seq++
	return h
}

// lifecycle emits response.created, .in_progress, .completed, ….
func (e *responseEncoder) lifecycle(event string) error {
	snap := *e.resp
	return e.send(event, responseEvent{eventHead: e.head(event), Response: &snap})
}

// start emits response.created and response.in_progress once, before the
// first output (so an error before any output is still a plain HTTP error).
func (e *responseEncoder) start() error {
	if e.started {
		return nil
	}
	e.started = true
	if err := e.lifecycle(evCreated); err != nil {
		return err
	}
	return e.lifecycle(evInProgress)
}

// delta adds one engine delta to the output.
func (e *responseEncoder) delta(d engine.Delta) error {
	if err := e.start(); err != nil {
		return err
	}
	if d.Reasoning != "" {
		if d.Content == "" {
			e.reasoningTokens += len(d.Tokens)
		}
		if err := e.text(itemReasoning, d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != "" {
		if err := e.text(itemMessage, d.Content); err != nil {
			return err
		}
	}
	for _, c := range d.ToolCalls {
		if err := e.call(c); err != nil {
			return err
		}
	}
	return nil
}

// text appends s to the open item of kind, opening one (and closing an
// item of the other kind) when needed.
func (e *responseEncoder) text(kind, s string) error {
	if e.open >= 0 && e.resp.Output[e.open].Type != kind {
		if err := e.closeOpen(statusCompleted); err != nil {
			return err
		}
	}
	if e.open < 0 {
		if err := e.openItem(kind); err != nil {
			return err
		}
	}
	item := &e.resp.Output[e.open]
	item.Content[0].Text += s
	event := evTextDelta
	if kind == itemReasoning {
		event = evReasoningDelta
	}
	ev := textEvent{eventHead: e.head(event), ItemID: item.ID, OutputIndex: e.open, Delta: &s}
	if kind == itemMessage {
		ev.Logprobs = noLogprobs()
	}
	return e.send(event, ev)
}

// openItem starts a message or reasoning item with one empty text part.
func (e *responseEncoder) openItem(kind string) error {
	item := OutputItem{Type: kind, Status: statusInProgress, Content: []ContentPart{}}
	part := ContentPart{Type: "reasoning_text"}
	if kind == itemMessage {
		item.ID, item.Role = newID("msg_"), "assistant"
		part = ContentPart{Type: "output_text", Annotations: noLogprobs(), Logprobs: noLogprobs()}
	} else {
		item.ID, item.Summary = newID("rs_"), []ContentPart{}
	}
	e.resp.Output = append(e.resp.Output, item)
	e.open = len(e.resp.Output) - 1
	if err := e.send(evItemAdded, itemEvent{eventHead: e.head(evItemAdded), OutputIndex: e.open, Item: item}); err != nil {
		return err
	}
	e.resp.Output[e.open].Content = []ContentPart{part}
	return e.send(evPartAdded, partEvent{eventHead: e.head(evPartAdded), ItemID: item.ID, OutputIndex: e.open, Part: part})
}

// closeOpen ends the open item with its whole text.
func (e *responseEncoder) closeOpen(status string) error {
	if e.open < 0 {
		return nil
	}
	idx := e.open
	e.open = -1
	item := &e.resp.Output[idx]
	part := item.Content[0]
	event := evTextDone
	if item.Type == itemReasoning {
		event = evReasoningDone
	}
	ev := textEvent{eventHead: e.head(event), ItemID: item.ID, OutputIndex: idx, Text: &part.Text}
	if item.Type == itemMessage {
		ev.Logprobs = noLogprobs()
	}
	if err := e.send(event, ev); err != nil {
		return err
	}
	if err := e.send(evPartDone, partEvent{eventHead: e.head(evPartDone), ItemID: item.ID, OutputIndex: idx, Part: part}); err != nil {
		return err
	}
	item.Status = status
	return e.send(evItemDone, itemEvent{eventHead: e.head(evItemDone), OutputIndex: idx, Item: *item})
}

// call adds one whole tool call as a function_call item.
func (e *responseEncoder) call(c engine.ToolCall) error {
	if err := e.closeOpen(statusCompleted); err != nil {
		return err
	}
	item := OutputItem{Type: itemFunctionCall, ID: newID("fc_"), Status: statusInProgress, CallID: c.ID, Name: c.Name, Arguments: ptr("")}
	e.resp.Output = append(e.resp.Output, item)
	idx := len(e.resp.Output) - 1
	if err := e.send(evItemAdded, itemEvent{eventHead: e.head(evItemAdded), OutputIndex: idx, Item: item}); err != nil {
		return err
	}
	args := c.Arguments
	if err := e.send(evArgsDelta, argsEvent{eventHead: e.head(evArgsDelta), ItemID: item.ID, OutputIndex: idx, Delta: &args}); err != nil {
		return err
	}
	if err := e.send(evArgsDone, argsEvent{eventHead: e.head(evArgsDone), ItemID: item.ID, OutputIndex: idx, Name: c.Name, Arguments: &args}); err != nil {
		return err
	}
	done := &e.resp.Output[idx]
	done.Arguments, done.Status = &args, statusCompleted
	return e.send(evItemDone, itemEvent{eventHead: e.head(evItemDone), OutputIndex: idx, Item: *done})
}

// finish completes the response with the generation's result: completed,
// or incomplete when it ran out of tokens.
func (e *responseEncoder) finish(res engine.Result) error {
	if err := e.start(); err != nil {
		return err
	}
	status, event := statusCompleted, evCompleted
	if res.FinishReason == "length" {
		status, event = statusIncomplete, evIncomplete
		e.resp.IncompleteDetails = &IncompleteDetails{Reason: "max_output_tokens"}
	}
	if err := e.closeOpen(status); err != nil {
		return err
	}
	e.resp.Status = status
	e.resp.Usage = responseUsage(res.Usage, e.reasoningTokens)
	return e.lifecycle(event)
}

// fail ends a started stream with response.failed.
func (e *responseEncoder) fail(body ErrorBody) error {
	e.resp.Status = statusFailed
	e.resp.Error = &ResponseError{Code: body.Code, Message: body.Message}
	return e.lifecycle(evFailed)
}

// responseUsage converts engine usage to the Responses usage object.
func responseUsage(u engine.Usage, reasoningTokens int) *ResponseUsage {
	return &ResponseUsage{
		InputTokens:         u.PromptTokens,
		InputTokensDetails:  InputTokensDetails{CachedTokens: u.CachedTokens},
		OutputTokens:        u.CompletionTokens,
		OutputTokensDetails: OutputTokensDetails{ReasoningTokens: min(reasoningTokens, u.CompletionTokens)},
		TotalTokens:         u.PromptTokens + u.CompletionTokens,
	}
}

// noLogprobs is an empty, non-nil list (encoded as []).
func noLogprobs() []json.RawMessage { return []json.RawMessage{} }
