// Package engine is the engine behind every front end: the registry of loaded
// models, the per-model scheduler (continuous batching, chunked prefill,
// paged KV blocks, prefix cache), pre-flight checks and poison tracking, and
// the structured output of every generation (reasoning, content and tool
// calls, split by the model's OutputFormat), the same for every caller.
//
// This file is the contract the front ends (HTTP API, TUI, one-shot run)
// program against. Manager implements Service in-process; pkg/api's Client
// implements the same interface against a running daemon.
package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// Service is what a front end needs from the engine.
type Service interface {
	// Chat renders the messages with the model's chat template and
	// generates; every piece of output is passed to onDelta as it is
	// produced. An error returned by onDelta cancels the generation.
	Chat(ctx context.Context, req ChatRequest, onDelta func(Delta) error) (Result, error)
	// Complete generates a continuation of a raw prompt (no template).
	Complete(ctx context.Context, req CompletionRequest, onDelta func(Delta) error) (Result, error)
	// Load loads a model (pulling it first if needed) without generating.
	Load(ctx context.Context, req LoadRequest) (ModelStatus, error)
	// Unload unloads a model; a model that is not loaded is a KindNotFound
	// error.
	Unload(ctx context.Context, model string) error
	// PS lists the loaded models.
	PS(ctx context.Context) ([]ModelStatus, error)
	// Show describes a model (loading it if needed).
	Show(ctx context.Context, model string) (ModelDetails, error)
}

// Options are the generation settings shared by chat and completion.
type Options struct {
	Sampling sampling.Params `json:"sampling"`
	// MaxTokens caps generated tokens; 0 = until an end-of-generation
	// token or the context is full.
	MaxTokens int      `json:"max_tokens,omitempty"`
	Stop      []string `json:"stop,omitempty"`
	// TopLogprobs > 0 (or Logprobs) returns logprobs with each delta.
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs int  `json:"top_logprobs,omitempty"`
	// JSONMode constrains the output to one JSON object that parses.
	JSONMode bool `json:"json_mode,omitempty"`
	// KeepAlive overrides how long the model stays loaded after this
	// request (nil = the daemon default; 0 = unload now; <0 = forever).
	KeepAlive *time.Duration `json:"keep_alive,omitempty"`
	// NumCtx asks for a context size when the request loads the model.
	NumCtx int `json:"num_ctx,omitempty"`
	// IgnoreEOS keeps generating past end-of-generation tokens (until
	// MaxTokens or the context ends): benchmarks that must time exactly
	// MaxTokens tokens.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
}

// ChatRequest is one chat turn: the whole conversation so far.
type ChatRequest struct {
	Model string `json:"model"`
	// Messages is a JSON array of OpenAI-style messages, handed to the chat
	// template exactly as given (key order preserved).
	Messages json.RawMessage `json:"messages"`
	// Tools is a JSON array of tool definitions, or nil.
	Tools json.RawMessage `json:"tools,omitempty"`
	// ToolChoice requires a tool call; the zero value lets the model
	// choose. (A caller that wants no calls sends no Tools.)
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// TemplateKwargs are extra template variables (e.g. enable_thinking).
	TemplateKwargs map[string]any `json:"template_kwargs,omitempty"`
	Options        Options        `json:"options"`
}

// ToolChoice is a chat request's tool choice. Required (or a Name) makes
// the answer one call, constrained to a JSON object: of the function Name
// (then the only tool the template sees), or, with Name "", of any of the
// tools.
type ToolChoice struct {
	Required bool   `json:"required,omitempty"`
	Name     string `json:"name,omitempty"`
}

// CompletionRequest continues a raw prompt.
type CompletionRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	// Tokens, when set, is the prompt as token ids (Prompt is ignored and
	// AddSpecial adds nothing).
	Tokens []int32 `json:"tokens,omitempty"`
	// AddSpecial adds the tokenizer's BOS (as llama.cpp does for raw prompts).
	AddSpecial bool    `json:"add_special"`
	Options    Options `json:"options"`
}

// Delta is a piece of generated output, split by the model's output
// format: the in-process Manager and pkg/api's Client give the same deltas
// for the same request.
type Delta struct {
	Content string `json:"content,omitempty"`
	// Reasoning is text inside the model's reasoning markers
	// (<think>…</think>, ...).
	Reasoning string `json:"reasoning,omitempty"`
	// Tokens are the ids that produced this delta, with logprobs when asked.
	Tokens []TokenInfo `json:"tokens,omitempty"`
	// ToolCalls are the tool calls parsed from the model's output (in
	// requests that declare tools), each whole; their markup is not in
	// Content.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is one call of a tool the request declared.
type ToolCall struct {
	// ID is the model's own call id where its format writes one, else
	// one the engine made up ("call_…").
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object, as a string (OpenAI's encoding).
	Arguments string `json:"arguments"`
}

// TokenInfo is one generated token.
type TokenInfo struct {
	ID      int32                   `json:"id"`
	Text    string                  `json:"text"`
	Logprob float32                 `json:"logprob"`
	Top     []executor.TokenLogprob `json:"top,omitempty"`
	// TopText is the text of each Top entry, in the same order (when known).
	TopText []string `json:"top_text,omitempty"`
}

// Result is how a generation ended.
type Result struct {
	// FinishReason is "stop" (EOS or a stop string), "tool_calls" (a
	// stop after tool calls), "length" (MaxTokens), or "cancelled".
	FinishReason string `json:"finish_reason"`
	// StopSequence is the stop string (Options.Stop) that ended a "stop"
	// generation; "" when an end-of-generation token (or JSON mode) did.
	StopSequence string `json:"stop_sequence,omitempty"`
	Usage        Usage  `json:"usage"`
	// Embedding is the pooled hidden state of an embedding request.
	Embedding []float32 `json:"embedding,omitempty"`
	// Undelivered is the output generated but never passed to the
	// caller's onDelta: what the engine still held back (a partial stop
	// string, a character's first bytes, a marker's start) when the
	// request was cancelled, and every delta after the cancellation or
	// after onDelta failed. A chat that keeps an interrupted answer
	// appends it, so the answer it records is exactly the text of the
	// tokens generated (and the next turn reuses them all). In-process
	// only: a cancelled stream has no one left to send it to.
	Undelivered Delta `json:"-"`
}

// Usage counts tokens and time for one request.
type Usage struct {
	PromptTokens     int           `json:"prompt_tokens"`
	CachedTokens     int           `json:"cached_tokens"` // prompt tokens reused from the prefix cache
	CompletionTokens int           `json:"completion_tokens"`
	PrefillDuration  time.Duration `json:"prefill_ns"`
	DecodeDuration   time.Duration `json:"decode_ns"`
	LoadDuration     time.Duration `json:"load_ns"`
	// Context is the context size of the model that served the request
	// (a request's num_ctx never reloads a model others are using).
	Context int `json:"context,omitempty"`
}

// LoadRequest loads a model.
type LoadRequest struct {
	Model     string         `json:"model"`
	NumCtx    int            `json:"num_ctx,omitempty"`
	KeepAlive *time.Duration `json:"keep_alive,omitempty"`
	// TP splits the model over that many tensor-parallel ranks (0 = the
	// daemon's default, HELEXA_TP).
	TP int `json:"tp,omitempty"`
}

// Model states. A ready model may be in use (ModelStatus.Active > 0).
const (
	StateLoading  = "loading"
	StateReady    = "ready"
	StatePoisoned = "poisoned"
)

// ModelStatus is one loaded model as `ps` shows it.
type ModelStatus struct {
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	SizeBytes int64     `json:"size_bytes"` // weights + KV
	Processor string    `json:"processor"`  // CPU, GPU, TP×N
	Context   int       `json:"context"`
	State     string    `json:"state"`               // loading, ready or poisoned
	RunnerPID int       `json:"runner_pid"`          // the model's runner process; 0 in-process
	Active    int       `json:"active"`              // running + queued requests
	Error     string    `json:"error,omitempty"`     // why it is poisoned
	ExpiresAt time.Time `json:"expires_at,omitzero"` // zero = never
	// Ranks are the processes of a tensor-parallel model, rank 0 first.
	Ranks []executor.RankInfo `json:"ranks,omitempty"`
}

// ModelDetails is what `/show info` prints.
type ModelDetails struct {
	Name         string `json:"name"`
	Path         string `json:"path"`
	Arch         string `json:"arch"`
	Parameters   int64  `json:"parameters"`
	Quant        string `json:"quant"`
	ContextTrain int    `json:"context_train"`
	Context      int    `json:"context"`
	Template     string `json:"template"`
	FileBytes    int64  `json:"file_bytes"`
	VocabSize    int    `json:"vocab_size,omitempty"`
}
