package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helexa/helexa/pkg/engine"
)

// toEngine translates a Messages request into the engine's chat request:
// the conversation as the OpenAI-style messages chat templates read
// (system first, later system turns in place; tool_use blocks as
// tool_calls, tool_result blocks as "tool" messages, thinking blocks as
// reasoning_content), the tools as OpenAI function tools. needMax requires max_tokens, as Anthropic does
// for messages (count_tokens has none).
func (r *MessagesRequest) toEngine(needMax bool) (engine.ChatRequest, error) {
	var out engine.ChatRequest
	if err := validateModel(r.Model); err != nil {
		return out, err
	}
	if needMax && r.MaxTokens == nil {
		return out, badRequest("field \"max_tokens\" is required: the most tokens to generate")
	}
	msgs, err := r.templateMessages()
	if err != nil {
		return out, err
	}
	for i, st := range r.StopSequences {
		if st == "" {
			return out, badRequest("stop_sequences[%d] is empty: stop sequences must be non-empty", i)
		}
	}
	gp := GenerationParams{
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MaxTokens: r.MaxTokens,
		Stop: StopList(r.StopSequences), KeepAlive: r.KeepAlive, NumCtx: r.NumCtx,
	}
	o, err := gp.options()
	if err != nil {
		return out, err
	}
	tools, choice, err := r.engineTools()
	if err != nil {
		return out, err
	}
	kwargs, err := r.thinkingKwargs()
	if err != nil {
		return out, err
	}
	return engine.ChatRequest{
		Model: r.Model, Messages: msgs, Tools: tools, ToolChoice: choice, TemplateKwargs: kwargs, Options: o,
	}, nil
}

// templateMessage is one message as chat templates read it (the OpenAI
// shape the chat route hands them).
type templateMessage struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
}

// templateMessages translates system and messages.
func (r *MessagesRequest) templateMessages() (json.RawMessage, error) {
	if len(r.Messages) == 0 {
		return nil, badRequest("field \"messages\" is required: a non-empty list of {role, content} turns")
	}
	var out []templateMessage
	if r.System.Set {
		out = append(out, templateMessage{Role: "system", Content: r.System.Text})
	}
	toolNames := map[string]string{} // tool_use id → tool name, for tool results
	for i, m := range r.Messages {
		var msgs []templateMessage
		var err error
		switch m.Role {
		case "user":
			msgs, err = userMessages(m.Content, i, toolNames)
		case "assistant":
			msgs, err = assistantMessage(m.Content, i, toolNames)
		case "system":
			msgs, err = systemMessage(m.Content, i)
		default:
			err = badRequest("messages[%d].role is %q: turns are \"user\", \"assistant\" or \"system\"", i, m.Role)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return json.Marshal(out)
}

// systemMessage translates a system turn inside the conversation (Claude
// Code sends its environment notes as one): text blocks, kept in place as
// a "system" message, as the OpenAI route passes a later system message to
// the chat template.
func systemMessage(blocks AnthropicContent, idx int) ([]templateMessage, error) {
	texts := make([]string, 0, len(blocks))
	for j, b := range blocks {
		if b.Type != "text" {
			return nil, blockError(b.Type, blockAt(idx, j), "a system turn")
		}
		texts = append(texts, b.Text)
	}
	return []templateMessage{{Role: "system", Content: strings.Join(texts, "\n")}}, nil
}

// userMessages translates a user turn: its tool_result blocks become
// "tool" messages, its text blocks one user message after them.
func userMessages(blocks AnthropicContent, idx int, toolNames map[string]string) ([]templateMessage, error) {
	var out []templateMessage
	var texts []string
	for j, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_result":
			if b.ToolUseID == "" {
				return nil, badRequest("messages[%d].content[%d]: a tool_result block needs \"tool_use_id\"", idx, j)
			}
			text, err := toolResultText(b.Content, idx, j)
			if err != nil {
				return nil, err
			}
			if b.IsError {
				text = "Error: " + text
			}
			out = append(out, templateMessage{Role: "tool", Content: text, ToolCallID: b.ToolUseID, Name: toolNames[b.ToolUseID]})
		case "thinking", "redacted_thinking":
			// Only assistant turns carry reasoning; nothing to render.
		default:
			return nil, blockError(b.Type, blockAt(idx, j), "a user turn")
		}
	}
	if len(texts) > 0 || len(out) == 0 {
		out = append(out, templateMessage{Role: "user", Content: strings.Join(texts, "\n")})
	}
	return out, nil
}

// assistantMessage translates an assistant turn: text, thinking
// (reasoning_content) and tool_use blocks (tool_calls).
func assistantMessage(blocks AnthropicContent, idx int, toolNames map[string]string) ([]templateMessage, error) {
	m := templateMessage{Role: "assistant"}
	var texts, thoughts []string
	for j, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "thinking":
			thoughts = append(thoughts, b.Thinking)
		case "redacted_thinking":
			// Another service's encrypted reasoning: nothing a template can show.
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, badRequest("messages[%d].content[%d]: a tool_use block needs \"id\" and \"name\"", idx, j)
			}
			args, err := toolArguments(b.Input, idx, j)
			if err != nil {
				return nil, err
			}
			toolNames[b.ID] = b.Name
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: b.ID, Type: "function", Function: FunctionCall{Name: b.Name, Arguments: args}})
		default:
			return nil, blockError(b.Type, blockAt(idx, j), "an assistant turn")
		}
	}
	m.Content = strings.Join(texts, "\n")
	m.ReasoningContent = strings.Join(thoughts, "\n")
	return []templateMessage{m}, nil
}

// blockAt names content block j of message idx.
func blockAt(idx, j int) string { return fmt.Sprintf("messages[%d].content[%d]", idx, j) }

// blockError refuses a block that where cannot hold: images and documents
// with the OpenAI route's words, anything else by name.
func blockError(typ, at, where string) error {
	switch typ {
	case "image", "document", "search_result":
		return badRequest("%s is a %q block, but the models helexa runs read text only (no vision or audio); send text blocks", at, typ)
	case "":
		return badRequest("%s has no \"type\"", at)
	}
	return badRequest("%s has type %q, which %s cannot hold here; helexa understands text, tool_use, tool_result and thinking blocks", at, typ, where)
}

// toolArguments is a tool_use block's input as OpenAI's argument string.
func toolArguments(input json.RawMessage, idx, j int) (string, error) {
	if isNull(input) {
		return "{}", nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil {
		return "", badRequest("messages[%d].content[%d].input must be a JSON object", idx, j)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		return "", badRequest("messages[%d].content[%d].input: %v", idx, j, err)
	}
	return b.String(), nil
}

// toolResultText is a tool_result's content: a string or text blocks.
func toolResultText(raw json.RawMessage, idx, j int) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var c AnthropicContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", badRequest("messages[%d].content[%d].content must be a string or a list of text blocks", idx, j)
	}
	texts := make([]string, 0, len(c))
	for k, b := range c {
		if b.Type != "text" {
			return "", blockError(b.Type, fmt.Sprintf("%s.content[%d]", blockAt(idx, j), k), "a tool_result")
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// engineTools translates tools (input_schema → OpenAI function
// parameters) and tool_choice: auto (the default) lets the model choose,
// any requires a call, tool requires a call of the named tool, none drops
// the tools.
func (r *MessagesRequest) engineTools() (json.RawMessage, engine.ToolChoice, error) {
	var choice engine.ToolChoice
	if r.ToolChoice != nil {
		switch r.ToolChoice.Type {
		case "auto":
		case "none":
			return nil, choice, nil
		case "any":
			choice.Required = true
		case "tool":
			if r.ToolChoice.Name == "" {
				return nil, choice, badRequest("tool_choice {\"type\":\"tool\"} needs the tool's \"name\"")
			}
			choice = engine.ToolChoice{Required: true, Name: r.ToolChoice.Name}
		default:
			return nil, choice, badRequest("tool_choice type %q is not supported: use \"auto\", \"any\", \"tool\" or \"none\"", r.ToolChoice.Type)
		}
	}
	if len(r.Tools) == 0 {
		if choice.Required {
			return nil, choice, badRequest("tool_choice requires a tool call but the request has no tools")
		}
		return nil, choice, nil
	}
	tools := make([]openAITool, 0, len(r.Tools))
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, choice, badRequest("tools[%d] is a %q server tool, which helexa does not run; declare client tools with name and input_schema", i, t.Type)
		}
		if t.Name == "" {
			return nil, choice, badRequest("tools[%d] needs a \"name\"", i)
		}
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
			return nil, choice, badRequest("tools[%d].input_schema must be a JSON Schema object", i)
		}
		tools = append(tools, openAITool{Type: "function", Function: openAIFunction{
			Name: t.Name, Description: t.Description, Parameters: t.InputSchema,
		}})
	}
	raw, err := json.Marshal(tools)
	return raw, choice, err
}

// openAITool is a tool as chat templates read it.
type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// thinkingKwargs maps `thinking` onto the model's thinking switch (the
// enable_thinking template variable, as chat_template_kwargs sets it on
// the OpenAI route): enabled turns it on, disabled off; adaptive and
// between_tools, like no `thinking`, leave the model's default. The budget
// is not enforced apart from max_tokens.
func (r *MessagesRequest) thinkingKwargs() (map[string]any, error) {
	if r.Thinking == nil {
		return nil, nil
	}
	switch r.Thinking.Type {
	case "enabled":
		if r.Thinking.BudgetTokens < 0 {
			return nil, badRequest("thinking.budget_tokens = %d: must be positive", r.Thinking.BudgetTokens)
		}
		return map[string]any{"enable_thinking": true}, nil
	case "disabled":
		return map[string]any{"enable_thinking": false}, nil
	case "adaptive", "between_tools":
		return nil, nil
	}
	return nil, badRequest("thinking type %q is not supported: use \"enabled\", \"disabled\" or \"adaptive\"", r.Thinking.Type)
}
