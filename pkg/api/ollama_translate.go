package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helexa/helexa/pkg/engine"
)

// options converts ollama's options (plus keep_alive) into the engine's,
// through the same checks as the OpenAI fields.
func (o *OllamaOptions) options(keepAlive *Duration) (engine.Options, error) {
	p := GenerationParams{
		Temperature: o.Temperature, TopP: o.TopP, TopK: o.TopK, MinP: o.MinP,
		RepeatPenalty: o.RepeatPenalty, RepeatLastN: o.RepeatLastN,
		PresencePenalty: o.PresencePenalty, FrequencyPenalty: o.FrequencyPenalty,
		Seed: o.Seed, Stop: o.Stop, KeepAlive: keepAlive, NumCtx: o.NumCtx,
	}
	if o.NumPredict != nil {
		switch n := *o.NumPredict; {
		case n > 0:
			p.MaxTokens = &n
		case n == -1 || n == -2: // ollama: no limit / fill the context
		default:
			return engine.Options{}, badRequest("options.num_predict = %d: use a positive number of tokens, or -1 for no limit", n)
		}
	}
	return p.options()
}

// ollamaFormat maps ollama's format to JSON mode: "json" constrains the
// answer to a JSON object; a JSON schema (structured outputs) is refused.
func ollamaFormat(raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "":
			return false, nil
		case "json":
			return true, nil
		}
		return false, badRequest("format %q is not supported: use \"json\"", s)
	}
	return false, badRequest("format as a JSON schema (structured outputs) is not supported yet: use \"format\": \"json\" for a JSON object")
}

// ollamaThink maps ollama's think (true, false, or an effort level) to
// the template's enable_thinking; nil leaves the template's default.
func ollamaThink(raw json.RawMessage) (map[string]any, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return map[string]any{"enable_thinking": b}, nil
	}
	var level string
	if json.Unmarshal(raw, &level) == nil {
		switch level {
		case "low", "medium", "high":
			return map[string]any{"enable_thinking": true, "reasoning_effort": level}, nil
		}
	}
	return nil, badRequest("think must be true, false, \"low\", \"medium\" or \"high\"")
}

// imagesRefused is the 400 for images: the models helexa runs read text.
func imagesRefused(where string) error {
	return badRequest("%s has images, but the models helexa runs read text only (no vision); send text", where)
}

// ollamaMessages converts ollama's messages into the OpenAI-style messages
// the chat templates read: thinking becomes reasoning_content, tool calls
// get OpenAI's string arguments, a tool result's tool_name its name.
func ollamaMessages(msgs []OllamaMessage) (json.RawMessage, error) {
	if len(msgs) == 0 {
		return nil, badRequest("field \"messages\" is required: a non-empty list of {role, content} objects")
	}
	out := make([]map[string]any, 0, len(msgs))
	for i, m := range msgs {
		if m.Role == "" {
			return nil, badRequest("messages[%d] has no \"role\"", i)
		}
		if len(m.Images) > 0 {
			return nil, imagesRefused(fmt.Sprintf("messages[%d]", i))
		}
		msg := map[string]any{"role": m.Role, "content": m.Content}
		if m.Thinking != "" {
			msg["reasoning_content"] = m.Thinking
		}
		if m.ToolName != "" {
			msg["name"] = m.ToolName
			msg["tool_name"] = m.ToolName
		}
		if len(m.ToolCalls) > 0 {
			calls, err := openAIToolCalls(m.ToolCalls, i)
			if err != nil {
				return nil, err
			}
			msg["tool_calls"] = calls
		}
		out = append(out, msg)
	}
	return json.Marshal(out)
}

// openAIToolCalls converts a message's ollama tool calls to OpenAI's.
func openAIToolCalls(calls []OllamaToolCall, idx int) ([]ToolCall, error) {
	out := make([]ToolCall, 0, len(calls))
	for j, c := range calls {
		if c.Function.Name == "" {
			return nil, badRequest("messages[%d].tool_calls[%d] has no function name", idx, j)
		}
		args := "{}"
		if !isNull(c.Function.Arguments) {
			var compact bytes.Buffer
			if err := json.Compact(&compact, c.Function.Arguments); err != nil {
				return nil, badRequest("messages[%d].tool_calls[%d].function.arguments is not JSON", idx, j)
			}
			args = compact.String()
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", j)
		}
		out = append(out, ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: c.Function.Name, Arguments: args}})
	}
	return out, nil
}

// ollamaToolCalls converts the engine's tool calls to ollama's shape,
// numbered after the n calls before them.
func ollamaToolCalls(calls []engine.ToolCall, n int) []OllamaToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]OllamaToolCall, 0, len(calls))
	for i, c := range calls {
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			args, _ = json.Marshal(c.Arguments)
		}
		out = append(out, OllamaToolCall{ID: c.ID, Function: OllamaToolFunction{Index: n + i, Name: c.Name, Arguments: args}})
	}
	return out
}

// toRunner converts an ollama chat request into the engine's request.
func (r *OllamaChatRequest) toRunner() (engine.ChatRequest, error) {
	var out engine.ChatRequest
	if err := validateModel(r.Model); err != nil {
		return out, err
	}
	msgs, err := ollamaMessages(r.Messages)
	if err != nil {
		return out, err
	}
	o, err := r.Options.options(r.KeepAlive)
	if err != nil {
		return out, err
	}
	if o.JSONMode, err = ollamaFormat(r.Format); err != nil {
		return out, err
	}
	kwargs, err := ollamaThink(r.Think)
	if err != nil {
		return out, err
	}
	tools := r.Tools
	if isNull(tools) {
		tools = nil
	}
	if tools != nil && !isJSONArray(tools) {
		return out, badRequest("tools must be a list of tool definitions")
	}
	return engine.ChatRequest{Model: r.Model, Messages: msgs, Tools: tools, TemplateKwargs: kwargs, Options: o}, nil
}

// generateRequest is an ollama generate request converted for the engine:
// a chat turn (Chat) or, with raw, a completion (Complete).
type generateRequest struct {
	chat     *engine.ChatRequest
	complete *engine.CompletionRequest
}

// toRunner converts an ollama generate request into the engine's request.
func (r *OllamaGenerateRequest) toRunner() (generateRequest, error) {
	var out generateRequest
	if err := validateModel(r.Model); err != nil {
		return out, err
	}
	switch {
	case len(r.Images) > 0:
		return out, imagesRefused("the request")
	case r.Template != "":
		return out, badRequest("template overrides are not supported: helexa renders the model's own chat template; leave \"template\" out (or send \"raw\": true with the whole prompt)")
	case len(r.Context) > 0:
		return out, badRequest("context (the token ids of an earlier answer) is not supported: send the conversation to /api/chat instead")
	case r.Suffix != "":
		return out, badRequest("suffix (fill-in-the-middle) is not supported: the model's template has no fill-in-the-middle form")
	case r.Raw && r.System != "":
		return out, badRequest("system is not used with \"raw\": true; put it in the prompt")
	}
	o, err := r.Options.options(r.KeepAlive)
	if err != nil {
		return out, err
	}
	if o.JSONMode, err = ollamaFormat(r.Format); err != nil {
		return out, err
	}
	kwargs, err := ollamaThink(r.Think)
	if err != nil {
		return out, err
	}
	if r.Raw {
		out.complete = &engine.CompletionRequest{Model: r.Model, Prompt: r.Prompt, AddSpecial: true, Options: o}
		return out, nil
	}
	msgs := make([]map[string]string, 0, 2)
	if r.System != "" {
		msgs = append(msgs, map[string]string{"role": "system", "content": r.System})
	}
	msgs = append(msgs, map[string]string{"role": "user", "content": r.Prompt})
	raw, err := json.Marshal(msgs)
	if err != nil {
		return out, err
	}
	out.chat = &engine.ChatRequest{Model: r.Model, Messages: raw, TemplateKwargs: kwargs, Options: o}
	return out, nil
}

// doneReason is ollama's done_reason for an engine finish reason: a stop
// after tool calls is a stop.
func doneReason(finish string) string {
	if finish == "tool_calls" {
		return "stop"
	}
	return finish
}

// ollamaMetrics converts engine usage to ollama's final-record fields.
func ollamaMetrics(u engine.Usage, total int64) *OllamaMetrics {
	return &OllamaMetrics{
		TotalDuration:      total,
		LoadDuration:       u.LoadDuration.Nanoseconds(),
		PromptEvalCount:    u.PromptTokens,
		PromptEvalDuration: u.PrefillDuration.Nanoseconds(),
		EvalCount:          u.CompletionTokens,
		EvalDuration:       u.DecodeDuration.Nanoseconds(),
	}
}

// ollamaName is the name an ollama request gives its model ("name" is
// the older spelling of "model").
func ollamaName(model, name string) string {
	if strings.TrimSpace(model) != "" {
		return model
	}
	return name
}
