package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// StopList is the OpenAI `stop` field: a string or a list of strings.
type StopList []string

// UnmarshalJSON accepts null, a string, or an array of strings.
func (s *StopList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = StopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("stop must be a string or a list of strings")
	}
	*s = many
	return nil
}

// Duration is a keep-alive duration on the wire: a Go duration string
// ("5m", "1h30m", "0", "-1") or a number of seconds, as ollama accepts.
type Duration struct{ time.Duration }

// UnmarshalJSON parses a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			d.Duration = time.Duration(v * float64(time.Second))
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("keep_alive %q is not a duration (use e.g. \"5m\", \"0\" or \"-1\")", s)
		}
		d.Duration = v
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("keep_alive must be a duration string or a number of seconds")
	}
	d.Duration = time.Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// StreamOptions is the OpenAI `stream_options` object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ResponseFormat is the OpenAI `response_format` object.
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// GenerationParams are the sampling fields shared by chat and completion
// requests: the OpenAI ones plus the llama.cpp/ollama extensions.
type GenerationParams struct {
	Temperature      *float32           `json:"temperature,omitempty"`
	TopP             *float32           `json:"top_p,omitempty"`
	MaxTokens        *int               `json:"max_tokens,omitempty"`
	Stop             StopList           `json:"stop,omitempty"`
	Seed             *int64             `json:"seed,omitempty"`
	PresencePenalty  *float32           `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float32           `json:"frequency_penalty,omitempty"`
	LogitBias        map[string]float32 `json:"logit_bias,omitempty"`
	N                *int               `json:"n,omitempty"`
	Stream           bool               `json:"stream,omitempty"`
	StreamOptions    *StreamOptions     `json:"stream_options,omitempty"`
	User             string             `json:"user,omitempty"`
	// Extensions (llama.cpp / ollama / helexa).
	TopK          *int      `json:"top_k,omitempty"`
	MinP          *float32  `json:"min_p,omitempty"`
	RepeatPenalty *float32  `json:"repeat_penalty,omitempty"`
	RepeatLastN   *int      `json:"repeat_last_n,omitempty"`
	KeepAlive     *Duration `json:"keep_alive,omitempty"`
	NumCtx        int       `json:"num_ctx,omitempty"`
	// ReturnTokens adds the generated token ids to every chunk (`token_ids`).
	ReturnTokens bool `json:"return_tokens,omitempty"`
	// IgnoreEOS (llama.cpp's ignore_eos) generates past end-of-generation
	// tokens until max_tokens.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
}

// ChatCompletionRequest is the body of POST /v1/chat/completions.
type ChatCompletionRequest struct {
	Model    string          `json:"model"`
	Messages json.RawMessage `json:"messages"`
	GenerationParams
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	Logprobs            *bool           `json:"logprobs,omitempty"`
	TopLogprobs         *int            `json:"top_logprobs,omitempty"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	Tools               json.RawMessage `json:"tools,omitempty"`
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	Metadata            map[string]any  `json:"metadata,omitempty"`
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs,omitempty"`
}

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	Model  string `json:"model"`
	Prompt Prompt `json:"prompt"`
	GenerationParams
	// Logprobs is the legacy integer: how many top tokens to return.
	Logprobs *int `json:"logprobs,omitempty"`
	Echo     bool `json:"echo,omitempty"`
	// AddSpecial adds BOS to the prompt (default true, as llama.cpp does).
	AddSpecial *bool `json:"add_special,omitempty"`
}

// Usage is the OpenAI usage object.
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails reports prompt tokens served from the prefix cache.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// ServedOptions are the load options a request was served with: a
// request's num_ctx never reloads a model others use, so the context can
// differ from the one asked for.
type ServedOptions struct {
	NumCtx int `json:"num_ctx"`
}

// served reports the options of a finished request (nil when unknown).
func served(u engine.Usage) *ServedOptions {
	if u.Context == 0 {
		return nil
	}
	return &ServedOptions{NumCtx: u.Context}
}

// Timings is the llama.cpp-style `timings` extension: how long prefill and
// decode took and the resulting speeds.
type Timings struct {
	PromptN            int     `json:"prompt_n"`
	CacheN             int     `json:"cache_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PromptPerSecond    float64 `json:"prompt_per_second"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
	LoadMS             float64 `json:"load_ms"`
}

// TopLogprob is one alternative token.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
	ID      int32   `json:"id"`
}

// TokenLogprob is one generated token with its alternatives.
type TokenLogprob struct {
	TopLogprob
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// ChoiceLogprobs is a choice's `logprobs` object.
type ChoiceLogprobs struct {
	Content []TokenLogprob `json:"content"`
}

// ChatMessage is an assistant message in a non-streaming response.
type ChatMessage struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// FunctionCall is the function a tool call invokes.
type FunctionCall struct {
	Name string `json:"name"`
	// Arguments is a JSON object, as a string (OpenAI's encoding).
	Arguments string `json:"arguments"`
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// ToolCallDelta is a tool call in a streaming chunk; helexa sends each
// call whole, in one delta.
type ToolCallDelta struct {
	Index int `json:"index"`
	ToolCall
}

// ChatChoice is one choice of a non-streaming chat response.
type ChatChoice struct {
	Index        int             `json:"index"`
	Message      ChatMessage     `json:"message"`
	Logprobs     *ChoiceLogprobs `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// ChatCompletion is the non-streaming chat response.
type ChatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   Usage        `json:"usage"`
	Timings *Timings     `json:"timings,omitempty"`
	// Options are the load options the request was served with.
	Options *ServedOptions `json:"options,omitempty"`
}

// ChunkDelta is the `delta` of a streaming chat chunk.
type ChunkDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCallDelta `json:"tool_calls,omitempty"`
	TokenIDs         []int32         `json:"token_ids,omitempty"`
}

// ChunkChoice is one choice of a streaming chat chunk.
type ChunkChoice struct {
	Index        int             `json:"index"`
	Delta        ChunkDelta      `json:"delta"`
	Logprobs     *ChoiceLogprobs `json:"logprobs,omitempty"`
	FinishReason *string         `json:"finish_reason"`
}

// ChatCompletionChunk is one SSE event of a streaming chat response.
type ChatCompletionChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
	Timings *Timings      `json:"timings,omitempty"`
	// Options are the load options the request was served with.
	Options *ServedOptions `json:"options,omitempty"`
}

// LegacyLogprobs is the /v1/completions `logprobs` object.
type LegacyLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float32            `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// CompletionChoice is one choice of a completion response or chunk.
type CompletionChoice struct {
	Index        int             `json:"index"`
	Text         string          `json:"text"`
	Logprobs     *LegacyLogprobs `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
	TokenIDs     []int32         `json:"token_ids,omitempty"`
}

// Completion is a /v1/completions response or streaming chunk.
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
	Timings *Timings           `json:"timings,omitempty"`
	// Options are the load options the request was served with.
	Options *ServedOptions `json:"options,omitempty"`
}

// Model is one entry of GET /v1/models, with helexa's state fields: the
// loaded models and the models in the local cache.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// State is loading, ready, busy or poisoned for a loaded model, and
	// "available" for one in the local cache that is not loaded.
	State     string     `json:"state"`
	Loaded    bool       `json:"loaded"`
	SizeBytes int64      `json:"size_bytes,omitempty"`
	Format    string     `json:"format,omitempty"` // gguf, safetensors (models in the cache)
	Quant     string     `json:"quant,omitempty"`
	Processor string     `json:"processor,omitempty"`
	Context   int        `json:"context,omitempty"`
	Active    int        `json:"active"`
	Error     string     `json:"error,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// ModelList is the GET /v1/models response.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// LoadRequest is the POST /api/load body.
type LoadRequest struct {
	Model     string    `json:"model"`
	KeepAlive *Duration `json:"keep_alive,omitempty"`
	NumCtx    int       `json:"num_ctx,omitempty"`
	// TP splits the model over that many tensor-parallel ranks.
	TP int `json:"tp,omitempty"`
}

// ModelRequest is the POST /api/unload, /api/show and /api/pull body.
type ModelRequest struct {
	Model string `json:"model"`
}

// PullRequest is the body of POST /api/pull.
type PullRequest struct {
	Model string `json:"model"`
	// PreferCache skips the Hub when the cache already holds a complete
	// snapshot (what `helexa run` asks before loading through a daemon).
	PreferCache bool `json:"prefer_cache,omitempty"`
	// ollama's fields: "name" is its old spelling of "model"; stream
	// false answers with the last record only; insecure is accepted and
	// ignored (it is about ollama registries, not the Hub).
	Name     string `json:"name,omitempty"`
	Stream   *bool  `json:"stream,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
}

// PullProgress is one step of a pull as a Puller reports it and the Go
// Client hands it on: Status is the hub's event kind (start, progress,
// verify, done, cached, notice), or "success" at the end. On the wire it
// is an OllamaPullRecord.
type PullProgress struct {
	Status    string `json:"status"`
	File      string `json:"file,omitempty"`
	Completed int64  `json:"completed,omitempty"`
	Total     int64  `json:"total,omitempty"`
	// Message is a notice's text (which quant was picked, …).
	Message string `json:"message,omitempty"`
}

// ErrorBody is the inside of an OpenAI-shaped error.
type ErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

// ErrorResponse is an OpenAI-shaped error: {"error":{"message","type","code"}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}
