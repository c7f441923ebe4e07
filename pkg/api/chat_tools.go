package api

import (
	"encoding/json"

	"github.com/helexa/helexa/pkg/api/toolcall"
)

// finishToolCalls is the finish_reason of a turn that ended with tool calls.
const finishToolCalls = "tool_calls"

// toolFilter turns the tool calls a model writes as text into OpenAI
// tool_calls, for requests that have tools. A nil *toolFilter passes
// content through unchanged.
type toolFilter struct {
	p *toolcall.Parser
	n int // calls so far (the next call's index)
}

// newToolFilter returns a filter for a request's tools; nil without tools.
func newToolFilter(tools json.RawMessage) *toolFilter {
	if tools == nil {
		return nil
	}
	return &toolFilter{p: toolcall.NewParser(tools)}
}

// push takes the next content text and returns the content and the calls
// that are now certain.
func (f *toolFilter) push(text string) (string, []ToolCallDelta) {
	if f == nil {
		return text, nil
	}
	content, calls := f.p.Push(text)
	return content, f.wire(calls)
}

// flush ends the content, deciding whatever is still held.
func (f *toolFilter) flush() (string, []ToolCallDelta) {
	if f == nil {
		return "", nil
	}
	content, calls := f.p.Flush()
	return content, f.wire(calls)
}

// all filters a whole answer at once.
func (f *toolFilter) all(text string) (string, []ToolCall) {
	c1, d1 := f.push(text)
	c2, d2 := f.flush()
	var calls []ToolCall
	for _, d := range append(d1, d2...) {
		calls = append(calls, d.ToolCall)
	}
	return c1 + c2, calls
}

// finishReason is "tool_calls" when a turn that stopped by itself made
// calls; other reasons ("length", …) are kept.
func (f *toolFilter) finishReason(reason string) string {
	if f != nil && f.n > 0 && reason == "stop" {
		return finishToolCalls
	}
	return reason
}

func (f *toolFilter) wire(calls []toolcall.Call) []ToolCallDelta {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCallDelta, 0, len(calls))
	for _, c := range calls {
		out = append(out, ToolCallDelta{Index: f.n, ToolCall: ToolCall{
			ID: newID("call_"), Type: "function",
			Function: FunctionCall{Name: c.Name, Arguments: c.Arguments},
		}})
		f.n++
	}
	return out
}
