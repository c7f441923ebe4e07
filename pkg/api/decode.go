package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/sampling"
)

// Default sampling settings for fields a request leaves out (llama.cpp's).
const (
	defaultTemperature = 0.8
	maxTopLogprobs     = 20
)

// bind decodes a native endpoint's body strictly into v (an unknown field
// is a 400 naming it); on failure it answers with the error and reports
// false.
func (s *Server) bind(c *gin.Context, v any) bool {
	if err := decodeBody(c.Request.Body, v, true); err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

// bindOpenAI decodes an OpenAI request body into v, ignoring fields helexa
// does not use (store, metadata, user, service_tier, …), as OpenAI and
// llama-server do; malformed values of fields it uses are still a 400.
func (s *Server) bindOpenAI(c *gin.Context, v any) bool {
	if err := decodeBody(c.Request.Body, v, false); err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

// bindRunner binds an OpenAI request body (req points at it) and converts
// it to the engine's request; on failure it answers with the error and
// reports false.
func bindRunner[R any](s *Server, c *gin.Context, req interface{ toRunner() (R, error) }) (R, bool) {
	var zero R
	if !s.bindOpenAI(c, req) {
		return zero, false
	}
	r, err := req.toRunner()
	if err != nil {
		s.fail(c, err)
		return zero, false
	}
	return r, true
}

// decodeBody decodes a JSON body into v; strict refuses unknown fields.
func decodeBody(r io.Reader, v any, strict bool) error {
	body, err := io.ReadAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return badRequest("request body has data after the JSON object")
	}
	return nil
}

// decodeError turns a json error into a 400 that names the offending field.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := strings.TrimPrefix(te.Field, "GenerationParams.")
		return badRequest("field %q: expected %s, got JSON %s", field, te.Type, te.Value)
	case errors.As(err, &se):
		return badRequest("request body is not valid JSON (offset %d): %v", se.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body is not valid JSON: it ends too early")
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return badRequest("unsupported field %s: helexa does not implement it; remove it from the request", f)
	}
	return badRequest("invalid request body: %s", strings.TrimPrefix(msg, "json: "))
}

// validateModel checks that a request names a model.
func validateModel(model string) error {
	if strings.TrimSpace(model) == "" {
		return badRequest("field \"model\" is required: a Hugging Face reference (org/repo[:QUANT]) or a .gguf path")
	}
	if i := strings.IndexFunc(model, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return badRequest("field \"model\" has a control character (byte %d): name a Hugging Face reference or a .gguf path", i)
	}
	return nil
}

// options converts the shared generation fields into runner options.
func (p *GenerationParams) options() (engine.Options, error) {
	var o engine.Options
	if p.N != nil && *p.N != 1 {
		return o, badRequest("n = %d is not supported: helexa returns exactly one choice (n = 1)", *p.N)
	}
	if p.StreamOptions != nil && !p.Stream {
		return o, badRequest("stream_options is only allowed with \"stream\": true")
	}
	s, err := p.sampling()
	if err != nil {
		return o, err
	}
	o.Sampling = s
	if p.MaxTokens != nil {
		if *p.MaxTokens < 1 {
			return o, badRequest("max_tokens = %d: must be at least 1", *p.MaxTokens)
		}
		o.MaxTokens = *p.MaxTokens
	}
	for i, st := range p.Stop {
		if st == "" {
			return o, badRequest("stop[%d] is empty: stop strings must be non-empty", i)
		}
	}
	o.Stop = p.Stop
	o.KeepAlive = durationPtr(p.KeepAlive)
	if err := checkNumCtx(p.NumCtx); err != nil {
		return o, err
	}
	o.NumCtx = p.NumCtx
	o.IgnoreEOS = p.IgnoreEOS
	return o, nil
}

// checkNumCtx refuses a negative num_ctx (0 means the default).
func checkNumCtx(n int) error {
	if n < 0 {
		return badRequest("num_ctx = %d: must be a positive number of tokens (or 0 for the default)", n)
	}
	return nil
}

// sampling converts and range-checks the sampling fields.
func (p *GenerationParams) sampling() (sampling.Params, error) {
	s := sampling.Params{Temperature: defaultTemperature, Seed: rand.Uint64()}
	checks := []struct {
		name     string
		v        *float32
		lo, hi   float32
		dst      *float32
		openLow  bool
		helpText string
	}{
		{"temperature", p.Temperature, 0, 2, &s.Temperature, false, "0 = greedy"},
		{"top_p", p.TopP, 0, 1, &s.TopP, true, ""},
		{"min_p", p.MinP, 0, 1, &s.MinP, false, ""},
		{"presence_penalty", p.PresencePenalty, -2, 2, &s.PresencePenalty, false, ""},
		{"frequency_penalty", p.FrequencyPenalty, -2, 2, &s.FrequencyPenalty, false, ""},
		{"repeat_penalty", p.RepeatPenalty, 0, 10, &s.RepeatPenalty, false, "1 = off"},
	}
	for _, c := range checks {
		if c.v == nil {
			continue
		}
		if *c.v < c.lo || *c.v > c.hi || (c.openLow && *c.v == c.lo) {
			return s, badRequest("%s = %g is out of range [%g, %g]", c.name, *c.v, c.lo, c.hi)
		}
		*c.dst = *c.v
	}
	if p.TopK != nil {
		if *p.TopK < 0 {
			return s, badRequest("top_k = %d: must be >= 0 (0 = disabled)", *p.TopK)
		}
		s.TopK = *p.TopK
	}
	if p.RepeatLastN != nil {
		if *p.RepeatLastN < -1 {
			return s, badRequest("repeat_last_n = %d: must be >= -1 (-1 = whole context)", *p.RepeatLastN)
		}
		s.RepeatLastN = *p.RepeatLastN
	}
	if p.Seed != nil {
		s.Seed = uint64(*p.Seed)
	}
	bias, err := logitBias(p.LogitBias)
	if err != nil {
		return s, err
	}
	s.LogitBias = bias
	return s, nil
}

// logitBias converts OpenAI's {"token id": bias} map.
func logitBias(m map[string]float32) (map[int32]float32, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[int32]float32, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, badRequest("logit_bias key %q is not a token id", k)
		}
		if v < -100 || v > 100 {
			return nil, badRequest("logit_bias[%s] = %g is out of range [-100, 100]", k, v)
		}
		out[int32(id)] = v
	}
	return out, nil
}

// toRunner converts a chat request into the engine's request.
func (r *ChatCompletionRequest) toRunner() (engine.ChatRequest, error) {
	var out engine.ChatRequest
	if err := validateModel(r.Model); err != nil {
		return out, err
	}
	if err := validateMessages(r.Messages); err != nil {
		return out, err
	}
	msgs, err := flattenContent(r.Messages)
	if err != nil {
		return out, err
	}
	o, err := r.options()
	if err != nil {
		return out, err
	}
	if r.MaxCompletionTokens != nil {
		if *r.MaxCompletionTokens < 1 {
			return out, badRequest("max_completion_tokens = %d: must be at least 1", *r.MaxCompletionTokens)
		}
		o.MaxTokens = *r.MaxCompletionTokens
	}
	if err := r.applyLogprobs(&o); err != nil {
		return out, err
	}
	if o.JSONMode, err = jsonMode(r.ResponseFormat); err != nil {
		return out, err
	}
	tools, choice, err := r.tools()
	if err != nil {
		return out, err
	}
	return engine.ChatRequest{
		Model: r.Model, Messages: msgs, Tools: tools, ToolChoice: choice,
		TemplateKwargs: r.ChatTemplateKwargs, Options: o,
	}, nil
}

func (r *ChatCompletionRequest) applyLogprobs(o *engine.Options) error {
	lp := r.Logprobs != nil && *r.Logprobs
	if r.TopLogprobs != nil {
		if !lp {
			return badRequest("top_logprobs requires \"logprobs\": true")
		}
		if *r.TopLogprobs < 0 || *r.TopLogprobs > maxTopLogprobs {
			return badRequest("top_logprobs = %d is out of range [0, %d]", *r.TopLogprobs, maxTopLogprobs)
		}
		o.TopLogprobs = *r.TopLogprobs
	}
	o.Logprobs = lp
	return nil
}

// tools checks tools and tool_choice: "none" drops the tools, "auto" (the
// default) lets the model choose, "required" and a named function require
// a call (the engine constrains the answer to it, and a named function is
// the only tool the template sees).
func (r *ChatCompletionRequest) tools() (json.RawMessage, engine.ToolChoice, error) {
	var none engine.ToolChoice
	tools := r.Tools
	if isNull(tools) {
		tools = nil
	}
	if tools != nil && !isJSONArray(tools) {
		return nil, none, badRequest("tools must be a list of tool definitions")
	}
	if isNull(r.ToolChoice) {
		return tools, none, nil
	}
	var choice string
	if json.Unmarshal(r.ToolChoice, &choice) == nil {
		switch choice {
		case "auto":
			return tools, none, nil
		case "none":
			return nil, none, nil
		case "required":
			if tools == nil {
				return nil, none, badRequest("tool_choice \"required\" needs tools")
			}
			return tools, engine.ToolChoice{Required: true}, nil
		}
		return nil, none, badRequest("tool_choice %q is not supported: use \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":…}}", choice)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(r.ToolChoice, &named); err != nil || named.Function.Name == "" {
		return nil, none, badRequest("tool_choice must be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	if tools == nil {
		return nil, none, badRequest("tool_choice names function %q but the request has no tools", named.Function.Name)
	}
	return tools, engine.ToolChoice{Required: true, Name: named.Function.Name}, nil
}

// jsonMode maps response_format to runner JSON mode.
func jsonMode(rf *ResponseFormat) (bool, error) {
	if rf == nil {
		return false, nil
	}
	switch rf.Type {
	case "", "text":
		return false, nil
	case "json_object":
		return true, nil
	case "json_schema":
		return false, badRequest("response_format json_schema is not supported: use {\"type\": \"json_object\"}")
	default:
		return false, badRequest("response_format type %q is not supported: use \"text\" or \"json_object\"", rf.Type)
	}
}

// validateMessages checks that messages is a non-empty array of objects.
func validateMessages(raw json.RawMessage) error {
	if isNull(raw) {
		return badRequest("field \"messages\" is required: a non-empty list of {role, content} objects")
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return badRequest("messages must be a list of objects: %v", err)
	}
	if len(msgs) == 0 {
		return badRequest("messages is empty: send at least one message")
	}
	for i, m := range msgs {
		var role string
		if err := json.Unmarshal(m["role"], &role); err != nil || role == "" {
			return badRequest("messages[%d] has no \"role\"", i)
		}
	}
	return nil
}

// toRunner converts a completion request into the engine's request.
func (r *CompletionRequest) toRunner() (engine.CompletionRequest, error) {
	var out engine.CompletionRequest
	if err := validateModel(r.Model); err != nil {
		return out, err
	}
	if r.Echo {
		return out, badRequest("echo = true is not supported")
	}
	o, err := r.options()
	if err != nil {
		return out, err
	}
	if r.Logprobs != nil {
		if *r.Logprobs < 0 || *r.Logprobs > maxTopLogprobs {
			return out, badRequest("logprobs = %d is out of range [0, %d]", *r.Logprobs, maxTopLogprobs)
		}
		o.Logprobs = true
		o.TopLogprobs = *r.Logprobs
	}
	if r.Prompt.Len() == 0 {
		return out, badRequest("field \"prompt\" is required: a string, a list of strings or a list of token ids")
	}
	if r.Prompt.Len() > maxPrompts {
		return out, badRequest("%d prompts in one request; send at most %d", r.Prompt.Len(), maxPrompts)
	}
	addSpecial := r.AddSpecial == nil || *r.AddSpecial
	return engine.CompletionRequest{Model: r.Model, AddSpecial: addSpecial, Options: o}, nil
}

// maxPrompts caps the prompts (choices) of one completions request.
const maxPrompts = 64

// each returns the engine request of every prompt, in order.
func (r *CompletionRequest) each(base engine.CompletionRequest) []engine.CompletionRequest {
	out := make([]engine.CompletionRequest, 0, r.Prompt.Len())
	for _, t := range r.Prompt.Texts {
		q := base
		q.Prompt = t
		out = append(out, q)
	}
	for _, ids := range r.Prompt.Tokens {
		q := base
		q.Tokens = ids
		out = append(out, q)
	}
	return out
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func isJSONArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

// durationPtr converts an optional wire duration.
func durationPtr(d *Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := d.Duration
	return &v
}

// wireDuration converts an optional engine duration.
func wireDuration(d *time.Duration) *Duration {
	if d == nil {
		return nil
	}
	return &Duration{*d}
}
