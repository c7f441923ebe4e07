package api

import (
	"encoding/json"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// OllamaOptions are the `options` of an ollama request, with ollama's
// names. Options helexa has no use for (num_thread, mirostat, …) are
// ignored, as ollama ignores the ones a runner lacks.
type OllamaOptions struct {
	NumCtx           int      `json:"num_ctx,omitempty"`
	NumPredict       *int     `json:"num_predict,omitempty"`
	Temperature      *float32 `json:"temperature,omitempty"`
	TopK             *int     `json:"top_k,omitempty"`
	TopP             *float32 `json:"top_p,omitempty"`
	MinP             *float32 `json:"min_p,omitempty"`
	RepeatPenalty    *float32 `json:"repeat_penalty,omitempty"`
	RepeatLastN      *int     `json:"repeat_last_n,omitempty"`
	PresencePenalty  *float32 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float32 `json:"frequency_penalty,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	Stop             StopList `json:"stop,omitempty"`
}

// OllamaToolCall is a tool call in ollama's shape: the arguments are a
// JSON object, not a string.
type OllamaToolCall struct {
	// ID is helexa's call id (newer ollama versions send one too).
	ID       string             `json:"id,omitempty"`
	Function OllamaToolFunction `json:"function"`
}

// OllamaToolFunction is the function an OllamaToolCall invokes.
type OllamaToolFunction struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// OllamaMessage is one message of an ollama chat.
type OllamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	Images    []string         `json:"images,omitempty"`
	ToolCalls []OllamaToolCall `json:"tool_calls,omitempty"`
	ToolName  string           `json:"tool_name,omitempty"`
}

// OllamaChatRequest is the body of POST /api/chat.
type OllamaChatRequest struct {
	Model     string          `json:"model"`
	Messages  []OllamaMessage `json:"messages"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	Format    json.RawMessage `json:"format,omitempty"`
	Options   OllamaOptions   `json:"options"`
	Stream    *bool           `json:"stream,omitempty"`
	KeepAlive *Duration       `json:"keep_alive,omitempty"`
	Think     json.RawMessage `json:"think,omitempty"`
}

// OllamaGenerateRequest is the body of POST /api/generate.
type OllamaGenerateRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Suffix    string          `json:"suffix,omitempty"`
	System    string          `json:"system,omitempty"`
	Template  string          `json:"template,omitempty"`
	Context   []int           `json:"context,omitempty"`
	Raw       bool            `json:"raw,omitempty"`
	Images    []string        `json:"images,omitempty"`
	Format    json.RawMessage `json:"format,omitempty"`
	Options   OllamaOptions   `json:"options"`
	Stream    *bool           `json:"stream,omitempty"`
	KeepAlive *Duration       `json:"keep_alive,omitempty"`
	Think     json.RawMessage `json:"think,omitempty"`
}

// OllamaMetrics are the counts and timings of a final (done) record,
// durations in nanoseconds, as ollama reports them; records embed them by
// pointer, so records before the last have none.
type OllamaMetrics struct {
	TotalDuration      int64 `json:"total_duration"`
	LoadDuration       int64 `json:"load_duration"`
	PromptEvalCount    int   `json:"prompt_eval_count"`
	PromptEvalDuration int64 `json:"prompt_eval_duration"`
	EvalCount          int   `json:"eval_count"`
	EvalDuration       int64 `json:"eval_duration"`
}

// OllamaChatResponse is one NDJSON record of /api/chat (or the whole
// answer when not streamed).
type OllamaChatResponse struct {
	Model      string        `json:"model"`
	CreatedAt  time.Time     `json:"created_at"`
	Message    OllamaMessage `json:"message"`
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason,omitempty"`
	*OllamaMetrics
}

// OllamaGenerateResponse is one NDJSON record of /api/generate.
type OllamaGenerateResponse struct {
	Model      string    `json:"model"`
	CreatedAt  time.Time `json:"created_at"`
	Response   string    `json:"response"`
	Thinking   string    `json:"thinking,omitempty"`
	Done       bool      `json:"done"`
	DoneReason string    `json:"done_reason,omitempty"`
	*OllamaMetrics
}

// OllamaError is an error in ollama's shape, with helexa's machine code
// alongside.
type OllamaError struct {
	Error string `json:"error"`
	// Code is helexa's error code (an engine kind), for clients that
	// branch on it.
	Code string `json:"code,omitempty"`
}

// OllamaDetails describe a model as ollama's /api/tags, /api/show and
// /api/ps do.
type OllamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

// OllamaModel is one entry of GET /api/tags.
type OllamaModel struct {
	Name       string        `json:"name"`
	Model      string        `json:"model"`
	ModifiedAt time.Time     `json:"modified_at"`
	Size       int64         `json:"size"`
	Digest     string        `json:"digest"`
	Details    OllamaDetails `json:"details"`
	// helexa's fields.
	Path   string `json:"path,omitempty"`
	Loaded bool   `json:"loaded"`
}

// OllamaTags is the GET /api/tags response.
type OllamaTags struct {
	Models []OllamaModel `json:"models"`
}

// PSModel is one entry of GET /api/ps: ollama's fields, then helexa's
// (engine.ModelStatus; its name and expires_at are ollama's).
type PSModel struct {
	Name          string        `json:"name"`
	Model         string        `json:"model"`
	Size          int64         `json:"size"`
	Digest        string        `json:"digest"`
	Details       OllamaDetails `json:"details"`
	ExpiresAt     time.Time     `json:"expires_at"`
	SizeVRAM      int64         `json:"size_vram"`
	ContextLength int           `json:"context_length"`
	engine.ModelStatus
}

// PSResponse is the GET /api/ps response.
type PSResponse struct {
	Models []PSModel `json:"models"`
}

// ShowRequest is the body of POST /api/show (ollama's; "name" is its old
// spelling of "model").
type ShowRequest struct {
	Model   string `json:"model"`
	Name    string `json:"name,omitempty"`
	Verbose bool   `json:"verbose,omitempty"`
}

// ShowResponse is the POST /api/show response: ollama's fields, then
// helexa's (engine.ModelDetails; its template is ollama's).
type ShowResponse struct {
	Modelfile    string         `json:"modelfile"`
	Parameters   string         `json:"parameters"`
	Template     string         `json:"template"`
	Details      OllamaDetails  `json:"details"`
	ModelInfo    map[string]any `json:"model_info"`
	Capabilities []string       `json:"capabilities"`
	ModifiedAt   time.Time      `json:"modified_at"`
	engine.ModelDetails
}

// OllamaPullRecord is one NDJSON record of POST /api/pull: ollama's
// status, digest, total and completed, with helexa's event kind and file
// alongside. The last is {"status":"success"}, or an error.
type OllamaPullRecord struct {
	Status    string `json:"status,omitempty"`
	Digest    string `json:"digest,omitempty"`
	Total     int64  `json:"total,omitempty"`
	Completed int64  `json:"completed,omitempty"`
	Error     string `json:"error,omitempty"`
	// helexa's fields.
	Event string `json:"event,omitempty"`
	File  string `json:"file,omitempty"`
	Code  string `json:"code,omitempty"`
}

// OllamaEmbedRequest is the body of POST /api/embed.
type OllamaEmbedRequest struct {
	Model    string         `json:"model"`
	Input    EmbeddingInput `json:"input"`
	Truncate *bool          `json:"truncate,omitempty"`
	// Dimensions asks for shorter vectors, which helexa does not make.
	Dimensions int           `json:"dimensions,omitempty"`
	Options    OllamaOptions `json:"options"`
	KeepAlive  *Duration     `json:"keep_alive,omitempty"`
}

// OllamaEmbedResponse is the POST /api/embed response.
type OllamaEmbedResponse struct {
	Model      string      `json:"model"`
	Embeddings [][]float32 `json:"embeddings"`
	*OllamaMetrics
}

// OllamaEmbeddingsRequest is the body of the older POST /api/embeddings.
type OllamaEmbeddingsRequest struct {
	Model     string        `json:"model"`
	Prompt    string        `json:"prompt"`
	Options   OllamaOptions `json:"options"`
	KeepAlive *Duration     `json:"keep_alive,omitempty"`
}

// DeleteRequest is the body of DELETE /api/delete.
type DeleteRequest struct {
	Model string `json:"model"`
	Name  string `json:"name,omitempty"`
}
