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
	// NewThinkSplitter, when set, splits generated text into reasoning
	// (inside <think>…</think>) and content.
	NewThinkSplitter func(startInThink bool) ThinkSplitter
	Details          ModelDetails
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
}

// Template renders a conversation into prompt text.
type Template interface {
	Render(ctx context.Context, in ChatInput) (string, error)
}

// ThinkSplitter separates reasoning from content in streamed text.
type ThinkSplitter interface {
	Push(text string) (reasoning, content string)
	Flush() (reasoning, content string)
}
