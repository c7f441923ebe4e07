package api

import (
	"context"
	"encoding/json"

	"github.com/helexa/helexa/pkg/api/toolcall"
	"github.com/helexa/helexa/pkg/engine"
)

// finishToolCalls is the finish_reason of a turn that ended with tool calls.
const finishToolCalls = "tool_calls"

// toolFilter turns the tool calls a model writes as text into OpenAI
// tool_calls, for requests that have tools. A nil *toolFilter passes
// content through unchanged.
type toolFilter struct {
	p        toolcall.Stream // nil until the first push
	tools    json.RawMessage
	template func() string
	n        int // calls so far (the next call's index)
	// forced is set when tool_choice requires a call: the answer (held
	// whole, constrained to one JSON object) is the call.
	forced *forcedCall
}

// forcedCall is a tool_choice that requires a call: of the named function,
// or (name "") of any of the request's tools.
type forcedCall struct {
	name  string
	tools []string // the request's function names
	text  []byte   // the answer so far
}

// newToolFilter returns a filter for a request's tools; nil without tools.
// template returns the model's chat template, which picks the tool-call
// format (toolcall.NewStream; "" is the generic parser); it is called once,
// at the first push, while the generation holds the model.
func newToolFilter(tools json.RawMessage, forced *forcedCall, template func() string) *toolFilter {
	if tools == nil {
		return nil
	}
	return &toolFilter{tools: tools, template: template, forced: forced}
}

// parser returns the filter's parser, choosing the format on first use.
func (f *toolFilter) parser() toolcall.Stream {
	if f.p == nil {
		tmpl := ""
		if f.template != nil {
			tmpl = f.template()
		}
		f.p = toolcall.NewStream(tmpl, f.tools)
	}
	return f.p
}

// toolTemplate returns the chat template of the request's model, from
// which its tool-call format is chosen; "" when the request declares no
// tools or the model cannot be described. Call it while the request holds
// the model (during generation): before Chat it would load the model with
// the default context, after it the model may already be unloaded.
func (s *Server) toolTemplate(ctx context.Context, rreq engine.ChatRequest) string {
	if rreq.Tools == nil {
		return ""
	}
	d, err := s.cfg.Service.Show(ctx, rreq.Model)
	if err != nil {
		return ""
	}
	return d.Template
}

// push takes the next content text and returns the content and the calls
// that are now certain.
func (f *toolFilter) push(text string) (string, []ToolCallDelta) {
	if f == nil {
		return text, nil
	}
	if f.forced != nil {
		f.forced.text = append(f.forced.text, text...)
		return "", nil
	}
	content, calls := f.parser().Push(text)
	return content, f.wire(calls)
}

// flush ends the content, deciding whatever is still held.
func (f *toolFilter) flush() (string, []ToolCallDelta) {
	if f == nil {
		return "", nil
	}
	if f.forced != nil {
		call, ok := f.forced.call()
		if !ok {
			return string(f.forced.text), nil // cut short: not a whole object
		}
		return "", f.wire([]toolcall.Call{call})
	}
	if f.p == nil { // nothing was generated
		f.template = nil
	}
	content, calls := f.parser().Flush()
	return content, f.wire(calls)
}

// call reads the answer, one JSON object, as the required call: either
// {"name": …, "arguments": {…}} or the arguments of the named function.
func (fc *forcedCall) call() (toolcall.Call, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(fc.text, &obj) != nil {
		return toolcall.Call{}, false
	}
	var name string
	args, hasArgs := obj["arguments"]
	if !hasArgs {
		args, hasArgs = obj["parameters"]
	}
	if raw, ok := obj["name"]; ok && hasArgs && json.Unmarshal(raw, &name) == nil && (fc.name == "" || name == fc.name) {
		var s string
		if json.Unmarshal(args, &s) == nil { // arguments as an encoded string
			args = json.RawMessage(s)
		}
		return toolcall.Call{Name: name, Arguments: string(args)}, true
	}
	name = fc.name
	if name == "" && len(fc.tools) > 0 {
		name = fc.tools[0]
	}
	return toolcall.Call{Name: name, Arguments: string(fc.text)}, true
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
		id := c.ID // the model's own id where its format writes one
		if id == "" {
			id = newID("call_")
		}
		out = append(out, ToolCallDelta{Index: f.n, ToolCall: ToolCall{
			ID: id, Type: "function",
			Function: FunctionCall{Name: c.Name, Arguments: c.Arguments},
		}})
		f.n++
	}
	return out
}
