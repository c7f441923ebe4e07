package api

import (
	"encoding/json"
	"maps"

	"github.com/helexa/helexa/pkg/engine"
)

// responsePlan is a Responses request translated onto the chat path.
type responsePlan struct {
	chat engine.ChatRequest
	// history is the conversation without the instructions: the previous
	// response's, then this request's input (what a response continuing
	// from this one starts from, with this one's output appended).
	history []chatTurn
	store   bool
}

// plan converts the request into the engine's chat request; prev is the
// conversation of previous_response_id (nil when none).
func (r *ResponsesRequest) plan(prev []chatTurn) (responsePlan, error) {
	var p responsePlan
	if err := validateModel(r.Model); err != nil {
		return p, err
	}
	if err := r.refuseUnsupported(); err != nil {
		return p, err
	}
	o, err := r.options()
	if err != nil {
		return p, err
	}
	if r.MaxOutputTokens != nil {
		if *r.MaxOutputTokens < 1 {
			return p, badRequest("max_output_tokens = %d: must be at least 1", *r.MaxOutputTokens)
		}
		o.MaxTokens = *r.MaxOutputTokens
	}
	if o.JSONMode, err = r.jsonMode(); err != nil {
		return p, err
	}
	kwargs, err := r.templateKwargs()
	if err != nil {
		return p, err
	}
	tools, choice, err := responsesTools(r.Tools, r.ToolChoice)
	if err != nil {
		return p, err
	}
	input, err := inputTurns(r.Input, prev)
	if err != nil {
		return p, err
	}
	p.history = append(append([]chatTurn(nil), prev...), input...)
	if len(p.history) == 0 {
		return p, badRequest("field \"input\" is required: a string or a non-empty list of input items")
	}
	msgs, err := marshalTurns(withInstructions(r.Instructions, p.history))
	if err != nil {
		return p, err
	}
	p.chat = engine.ChatRequest{Model: r.Model, Messages: msgs, Tools: tools, ToolChoice: choice, TemplateKwargs: kwargs, Options: o}
	p.store = r.Store == nil || *r.Store
	return p, nil
}

// refuseUnsupported names the request features helexa does not have, so
// that a client relying on them fails clearly instead of silently.
func (r *ResponsesRequest) refuseUnsupported() error {
	switch {
	case r.Background:
		return badRequest("background = true is not supported: helexa answers responses in the request (stream them for progress)")
	case !isNull(r.Conversation):
		return badRequest("conversation is not supported: continue a conversation with previous_response_id")
	case !isNull(r.Prompt):
		return badRequest("prompt (stored prompt templates) is not supported: send instructions and input")
	}
	return nil
}

// jsonMode maps text.format to the engine's JSON mode, as response_format
// on chat completions.
func (r *ResponsesRequest) jsonMode() (bool, error) {
	if r.Text == nil || r.Text.Format == nil {
		return false, nil
	}
	switch t := r.Text.Format.Type; t {
	case "", "text":
		return false, nil
	case "json_object":
		return true, nil
	case "json_schema":
		return false, badRequest("text.format json_schema (structured outputs) is not supported: use {\"type\": \"json_object\"}, which constrains the answer to one JSON object")
	default:
		return false, badRequest("text.format type %q is not supported: use \"text\" or \"json_object\"", t)
	}
}

// templateKwargs maps reasoning.effort to the model's thinking switch:
// "none" and "minimal" turn enable_thinking off, "low", "medium" and
// "high" turn it on (and set reasoning_effort, which templates with
// effort levels read). chat_template_kwargs set explicitly win.
func (r *ResponsesRequest) templateKwargs() (map[string]any, error) {
	kw := maps.Clone(r.ChatTemplateKwargs)
	if r.Reasoning == nil || r.Reasoning.Effort == nil {
		return kw, nil
	}
	set := map[string]any{}
	switch e := *r.Reasoning.Effort; e {
	case "none", "minimal":
		set["enable_thinking"] = false
	case "low", "medium", "high":
		set["enable_thinking"] = true
		set["reasoning_effort"] = e
	case "xhigh":
		set["enable_thinking"] = true
		set["reasoning_effort"] = "high"
	default:
		return nil, badRequest("reasoning.effort %q is not supported: use none, minimal, low, medium or high", e)
	}
	if kw == nil {
		kw = map[string]any{}
	}
	for k, v := range set {
		if _, ok := kw[k]; !ok {
			kw[k] = v
		}
	}
	return kw, nil
}

// skeleton is the response object before any output: the request's
// settings echoed as OpenAI does.
func (r *ResponsesRequest) skeleton(id string, created int64, store bool) *Response {
	resp := &Response{
		ID: id, Object: "response", CreatedAt: created, Status: "in_progress",
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model,
		Output: []OutputItem{}, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		Store: store, Temperature: r.Temperature, TopP: r.TopP, Truncation: "disabled",
		Text:       TextConfig{Format: &TextFormat{Type: "text"}},
		ToolChoice: json.RawMessage(`"auto"`), Tools: json.RawMessage(`[]`),
		Metadata: r.Metadata,
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if r.PreviousResponseID != "" {
		resp.PreviousResponseID = ptr(r.PreviousResponseID)
	}
	if r.Reasoning != nil {
		resp.Reasoning = *r.Reasoning
	}
	if r.Text != nil && r.Text.Format != nil {
		resp.Text = *r.Text
	}
	if !isNull(r.ToolChoice) {
		resp.ToolChoice = r.ToolChoice
	}
	if !isNull(r.Tools) {
		resp.Tools = r.Tools
	}
	return resp
}
