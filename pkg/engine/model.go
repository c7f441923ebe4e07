package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/helexa/helexa/pkg/executor"
)

// Loader loads a model by name (a reference or a path) into memory. The
// Manager calls it on the first request for a model; the real one is
// loader.Files, tests inject fakes.
type Loader interface {
	Load(ctx context.Context, name string, opts LoadOptions) (*Model, error)
}

// SizeEstimator is optionally implemented by a Loader: it estimates the
// memory a model will take (weights + KV) before loading it, so the Manager
// can evict idle models first.
type SizeEstimator interface {
	EstimateBytes(ctx context.Context, name string, opts LoadOptions) (int64, error)
}

// LoadOptions are the knobs a load takes.
type LoadOptions struct {
	// NumCtx is the context size (tokens) the KV pool is sized for.
	NumCtx int
	// NumParallel is how many sequences may decode at once; executors may
	// size their KV pool for it.
	NumParallel int
	// TP is the number of tensor-parallel ranks (1 = one process).
	TP int
}

// Model is one loaded model: its executor plus the text-side pieces.
type Model struct {
	Executor  executor.Executor
	Tokenizer Tokenizer
	// Template renders chat messages; nil means the model has no chat
	// template and Chat is refused (Complete still works).
	Template Template
	// Output is the model's output format (reasoning markers, tool-call
	// family), chosen once at load; nil takes all generated text as content.
	Output  OutputFormat
	Details ModelDetails
	// Closer, when set, releases resources besides the executor (a mapped
	// file); it runs after Executor.Close.
	Closer func() error
}

// close releases the executor and the extra resources.
func (m *Model) close() error {
	var errs []error
	if m.Executor != nil {
		errs = append(errs, m.Executor.Close())
	}
	if m.Closer != nil {
		errs = append(errs, m.Closer())
	}
	return errors.Join(errs...)
}

// Tokenizer is what the runner needs from a tokenizer.
type Tokenizer interface {
	// Encode turns text into token ids; addSpecial adds BOS/EOS as the
	// model wants, parseSpecial recognises special-token text.
	Encode(text string, addSpecial, parseSpecial bool) ([]int32, error)
	// IsEOG reports an end-of-generation token.
	IsEOG(id int32) bool
	// NewDecoder starts an incremental detokenizer for one stream.
	NewDecoder() Decoder
	// TokenText is the text one token stands for on its own (bytes of a
	// byte-fallback token as a string; "" for control tokens).
	TokenText(id int32) string
	// VocabSize is the number of token ids.
	VocabSize() int
}

// Decoder turns a stream of token ids into text without ever splitting a
// UTF-8 character across two returned pieces.
type Decoder interface {
	Add(id int32) string
	Flush() string
}

// ChatInput is what a chat template renders.
type ChatInput struct {
	Messages            json.RawMessage
	Tools               json.RawMessage
	AddGenerationPrompt bool
	Kwargs              map[string]any
	// MaxBytes, when positive, bounds the bytes the render may write: a
	// render past it stops with an error wrapping ErrRenderTooLong.
	MaxBytes int
}

// ErrRenderTooLong says a chat template's render went past
// ChatInput.MaxBytes: its prompt could never fit the model's context.
var ErrRenderTooLong = errors.New("the chat template's output passed its byte bound")

// Template renders a conversation into prompt text, stopping when ctx ends.
type Template interface {
	Render(ctx context.Context, in ChatInput) (string, error)
}

// OutputFormat is a model's output format: how its generated text marks
// reasoning and tool calls. The loader detects it once, when the model
// loads; the engine starts one parser per generation, so every caller gets
// the same structured deltas.
type OutputFormat interface {
	NewParser(o ParseOptions) OutputParser
}

// ParseOptions describe one generation to its output parser.
type ParseOptions struct {
	// Prompt is the rendered chat prompt (one that ends inside an open
	// reasoning block starts the generation in reasoning); "" for raw
	// completions.
	Prompt string
	// NoReasoning takes the whole text as content (JSON mode).
	NoReasoning bool
	// Tools is the request's tools array; nil leaves tool-call markup in
	// the content.
	Tools json.RawMessage
	// ToolChoice requires a call (with Tools).
	ToolChoice ToolChoice
}

// OutputParser splits one generation's text into reasoning, content and
// tool calls, incrementally: Push takes any split of the text, Flush ends
// it. Returned deltas carry no Tokens; tool calls may lack an ID (the
// engine assigns one).
type OutputParser interface {
	Push(text string) Delta
	Flush() Delta
}
