package engine

import (
	"context"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// Embedder is implemented by engines that compute embeddings (Manager; the
// API's /v1/embeddings uses it when the Service has it).
type Embedder interface {
	Embed(ctx context.Context, req EmbedRequest) (EmbedResult, error)
}

// EmbedRequest asks for one embedding per input.
type EmbedRequest struct {
	Model string `json:"model"`
	// Inputs are texts (tokenized with the model's BOS) …
	Inputs []string `json:"inputs,omitempty"`
	// … or prompts given as token ids.
	Tokens [][]int32 `json:"tokens,omitempty"`
	// Pooling is "mean" (default) or "last".
	Pooling   string         `json:"pooling,omitempty"`
	KeepAlive *time.Duration `json:"keep_alive,omitempty"`
}

// EmbedResult holds the unit-length embeddings, in input order.
type EmbedResult struct {
	Embeddings   [][]float32 `json:"embeddings"`
	PromptTokens int         `json:"prompt_tokens"`
}

var _ Embedder = (*Manager)(nil)

// Embed runs every input through the model (prefill only, no prefix
// reuse: mean pooling needs every token's hidden state) and pools the
// final hidden states.
func (m *Manager) Embed(ctx context.Context, req EmbedRequest) (EmbedResult, error) {
	t0 := time.Now()
	mode := executor.EmbedMean
	switch req.Pooling {
	case "", "mean":
	case "last":
		mode = executor.EmbedLast
	default:
		return EmbedResult{}, Errorf(KindBadRequest, "pooling %q: use \"mean\" or \"last\"", req.Pooling)
	}
	e, loadDur, err := m.acquire(ctx, req.Model, loadWant{})
	if err != nil {
		_, err = m.refused(ctx, req.Model, t0, err)
		return EmbedResult{}, err
	}
	defer m.release(e, req.KeepAlive)
	var out EmbedResult
	prompts := make([][]int32, 0, len(req.Inputs)+len(req.Tokens))
	for _, text := range req.Inputs {
		p, err := encode(ctx, e, text, true)
		if err != nil {
			return EmbedResult{}, err
		}
		prompts = append(prompts, p)
	}
	for _, ids := range req.Tokens {
		p, err := completionPrompt(ctx, e, CompletionRequest{Tokens: ids})
		if err != nil {
			return EmbedResult{}, err
		}
		prompts = append(prompts, p)
	}
	for _, p := range prompts {
		res, err := m.generate(ctx, e, genArgs{kind: "embedding", prompt: p, embed: mode, loadDur: loadDur, t0: t0},
			func(Delta) error { return nil })
		if err != nil {
			return EmbedResult{}, err
		}
		out.Embeddings = append(out.Embeddings, res.Embedding)
		out.PromptTokens += res.Usage.PromptTokens
		loadDur = 0
	}
	return out, nil
}
