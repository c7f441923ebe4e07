package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helexa/helexa/pkg/engine"
)

// The translation of a Responses request onto the chat path: input items
// become OpenAI chat messages (what the chat template renders), tools and
// options become the engine's.

// chatTurn is one OpenAI chat message as the chat templates read it.
type chatTurn struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
}

// inputItem is one item of a request's `input` list.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Summary   []inputPart     `json:"summary"`
}

// inputPart is one content part of an input message, a function call
// output or a reasoning item.
type inputPart struct {
	Type    string  `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
}

// inputTurns converts a request's input (a string, or a list of items)
// into chat messages. prev is the conversation so far (from
// previous_response_id), where function_call_output items find the names
// of the calls they answer.
func inputTurns(raw json.RawMessage, prev []chatTurn) ([]chatTurn, error) {
	if isNull(raw) {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []chatTurn{{Role: "user", Content: text}}, nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("input must be a string or a list of input items (messages, function_call, function_call_output, reasoning): %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	t := turnBuilder{names: callNames(prev)}
	for i, it := range items {
		if err := t.add(i, it); err != nil {
			return nil, err
		}
	}
	t.flush()
	return t.out, nil
}

// turnBuilder gathers consecutive assistant-side items (an assistant
// message, reasoning, function calls) into one assistant message.
type turnBuilder struct {
	out     []chatTurn
	pending *chatTurn         // the assistant message being gathered
	names   map[string]string // call id -> function name
}

func (t *turnBuilder) flush() {
	if t.pending != nil {
		t.out = append(t.out, *t.pending)
		t.pending = nil
	}
}

func (t *turnBuilder) assistant() *chatTurn {
	if t.pending == nil {
		t.pending = &chatTurn{Role: "assistant"}
	}
	return t.pending
}

// add converts item i.
func (t *turnBuilder) add(i int, it inputItem) error {
	switch it.Type {
	case "", itemMessage:
		return t.message(i, it)
	case itemReasoning:
		text, err := partsText(it.Content, i, "content")
		if err != nil {
			return err
		}
		if text == "" {
			text = joinParts(it.Summary)
		}
		a := t.assistant()
		a.ReasoningContent = joinNonEmpty(a.ReasoningContent, text)
		return nil
	case itemFunctionCall:
		return t.call(i, it)
	case "function_call_output":
		if it.CallID == "" {
			return badRequest("input[%d]: a function_call_output needs the \"call_id\" of the call it answers", i)
		}
		out, err := partsText(it.Output, i, "output")
		if err != nil {
			return err
		}
		t.flush()
		t.out = append(t.out, chatTurn{Role: "tool", Content: out, ToolCallID: it.CallID, Name: t.names[it.CallID]})
		return nil
	case "item_reference":
		return badRequest("input[%d] is an item_reference, which helexa does not resolve: send the items themselves, or continue with previous_response_id", i)
	default:
		return badRequest("input[%d] has type %q, which helexa does not support: send messages, function_call, function_call_output or reasoning items", i, it.Type)
	}
}

// message converts a message item.
func (t *turnBuilder) message(i int, it inputItem) error {
	role := it.Role
	switch role {
	case "user", "assistant", "system":
	case "developer":
		role = "system" // what chat templates know
	case "":
		return badRequest("input[%d] has no \"role\" (user, assistant, system or developer)", i)
	default:
		return badRequest("input[%d] has role %q: use user, assistant, system or developer", i, role)
	}
	text, err := partsText(it.Content, i, "content")
	if err != nil {
		return err
	}
	if role == "assistant" {
		a := t.assistant()
		a.Content = joinNonEmpty(a.Content, text)
		return nil
	}
	t.flush()
	t.out = append(t.out, chatTurn{Role: role, Content: text})
	return nil
}

// call converts a function_call item.
func (t *turnBuilder) call(i int, it inputItem) error {
	if it.CallID == "" || it.Name == "" {
		return badRequest("input[%d]: a function_call needs \"call_id\" and \"name\"", i)
	}
	var args string
	if !isNull(it.Arguments) && json.Unmarshal(it.Arguments, &args) != nil {
		return badRequest("input[%d].arguments must be a string holding a JSON object", i)
	}
	t.names[it.CallID] = it.Name
	a := t.assistant()
	a.ToolCalls = append(a.ToolCalls, ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: args}})
	return nil
}

// partsText joins the text of a string or a list of parts (input_text,
// output_text, text, reasoning_text, summary_text, refusal). An image,
// file or audio part is a 400, as on chat completions: the models helexa
// runs read text only.
func partsText(raw json.RawMessage, idx int, field string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []inputPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest("input[%d].%s must be a string or a list of parts like {\"type\":\"input_text\",\"text\":\"…\"}", idx, field)
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text", "reasoning_text", "summary_text":
			if p.Text == nil {
				return "", badRequest("input[%d].%s[%d]: a %s part needs \"text\"", idx, field, j, p.Type)
			}
			texts = append(texts, *p.Text)
		case "refusal":
			if p.Refusal != nil {
				texts = append(texts, *p.Refusal)
			}
		case "input_image", "input_file", "input_audio", "image_url", "image":
			return "", badRequest("input[%d].%s[%d] is a %q part, but the models helexa runs read text only (no vision or audio); send text parts", idx, field, j, p.Type)
		default:
			return "", badRequest("input[%d].%s[%d] has type %q; helexa understands input_text and output_text parts", idx, field, j, p.Type)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func joinParts(parts []inputPart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != nil && *p.Text != "" {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}

// callNames maps the call ids of a conversation's tool calls to their
// function names.
func callNames(turns []chatTurn) map[string]string {
	names := map[string]string{}
	for _, t := range turns {
		for _, c := range t.ToolCalls {
			names[c.ID] = c.Function.Name
		}
	}
	return names
}

// withInstructions puts the instructions first, as a system message
// (joined with a leading system message of the conversation, since many
// chat templates take one system message only).
func withInstructions(instructions *string, turns []chatTurn) []chatTurn {
	if instructions == nil || *instructions == "" {
		return turns
	}
	if len(turns) > 0 && turns[0].Role == "system" {
		out := append([]chatTurn(nil), turns...)
		out[0].Content = joinNonEmpty(*instructions, out[0].Content)
		return out
	}
	return append([]chatTurn{{Role: "system", Content: *instructions}}, turns...)
}

// responsesTools converts function tools to chat tools and tool_choice to
// the engine's, as chat completions does: "none" drops the tools, "auto"
// (the default) lets the model choose, "required" and a named function
// require a call.
func responsesTools(tools, choice json.RawMessage) (json.RawMessage, engine.ToolChoice, error) {
	var none engine.ToolChoice
	chatTools, err := chatToolsOf(tools)
	if err != nil {
		return nil, none, err
	}
	if isNull(choice) {
		return chatTools, none, nil
	}
	var mode string
	if json.Unmarshal(choice, &mode) == nil {
		switch mode {
		case "auto":
			return chatTools, none, nil
		case "none":
			return nil, none, nil
		case "required":
			if chatTools == nil {
				return nil, none, badRequest("tool_choice \"required\" needs tools")
			}
			return chatTools, engine.ToolChoice{Required: true}, nil
		}
		return nil, none, badRequest("tool_choice %q is not supported: use \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"name\":…}", mode)
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(choice, &named); err != nil || named.Type != "function" || named.Name == "" {
		return nil, none, badRequest("tool_choice must be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"name\":…}; helexa runs function tools only")
	}
	if chatTools == nil {
		return nil, none, badRequest("tool_choice names function %q but the request has no tools", named.Name)
	}
	return chatTools, engine.ToolChoice{Required: true, Name: named.Name}, nil
}

// responsesTool is one entry of a Responses request's tools: a function,
// a namespace grouping functions (Codex sends its sub-agent tools as one),
// or a hosted tool (web_search, file_search, …).
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Tools       []responsesTool `json:"tools,omitempty"` // a namespace's functions
}

// chatTool is a function tool as chat templates read it ({type, function}).
type chatTool struct {
	Type     string     `json:"type"`
	Function chatToolFn `json:"function"`
}

type chatToolFn struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// chatToolsOf converts Responses function tools ({type, name,
// description, parameters, strict}) to chat tools ({type, function}). A
// namespace's functions are offered by their own names; hosted tools,
// which only the vendor's servers run, are not offered to the model.
func chatToolsOf(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var tools []responsesTool
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, badRequest("tools must be a list of function tools like {\"type\":\"function\",\"name\":…,\"parameters\":{…}}")
	}
	out, err := appendChatTools(nil, tools, "tools")
	if err != nil || len(out) == 0 {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, badRequest("tools: %v", err)
	}
	return b, nil
}

// appendChatTools appends the function tools of tools (at names them in
// errors) to out, flattening namespaces and skipping hosted tools.
func appendChatTools(out []chatTool, tools []responsesTool, at string) ([]chatTool, error) {
	for i, t := range tools {
		switch t.Type {
		case "function":
		case "namespace":
			var err error
			if out, err = appendChatTools(out, t.Tools, fmt.Sprintf("%s[%d].tools", at, i)); err != nil {
				return nil, err
			}
			continue
		case "":
			return nil, badRequest("%s[%d] has no \"type\"", at, i)
		default: // hosted: nothing here can run it
			continue
		}
		if t.Name == "" {
			return nil, badRequest("%s[%d] has no \"name\"", at, i)
		}
		params := t.Parameters
		if isNull(params) {
			params = nil
		}
		out = append(out, chatTool{Type: "function", Function: chatToolFn{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, nil
}

// marshalTurns encodes a conversation as the engine's messages.
func marshalTurns(turns []chatTurn) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(turns); err != nil {
		return nil, badRequest("encoding the conversation: %v", err)
	}
	return bytes.TrimSpace(b.Bytes()), nil
}
