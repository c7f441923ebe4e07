package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/sampling"
)

// BenchOptions configure Bench. Zero values take the defaults.
type BenchOptions struct {
	Prompt      string  // default "Once upon a time"
	MaxTokens   int     // per request; default 128
	Rounds      int     // requests each worker sends, one after another; default 1
	Temperature float32 // default 0.8 (each request gets its own seed)
	AddSpecial  bool    // add BOS to the raw prompt
}

// BenchResult is one concurrency level's outcome.
type BenchResult struct {
	Concurrency      int           `json:"concurrency"`
	Requests         int           `json:"requests"`
	Errors           int           `json:"errors"`
	PromptTokens     int           `json:"prompt_tokens"`
	CachedTokens     int           `json:"cached_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	Wall             time.Duration `json:"wall_ns"`
	// AggregateTokensPerSec is every request's generated tokens divided by
	// the level's wall time: the throughput continuous batching buys.
	AggregateTokensPerSec float64 `json:"aggregate_tokens_per_sec"`
	// StreamTokensPerSec is the mean of each request's own decode rate.
	StreamTokensPerSec float64 `json:"stream_tokens_per_sec"`
	// MeanPrefill is the mean time to the first token (queueing excluded).
	MeanPrefill time.Duration `json:"mean_prefill_ns"`
	FirstError  string        `json:"first_error,omitempty"`
}

// Bench measures decode throughput at each concurrency level: for a level
// of n, n workers each send Rounds completion requests at once against
// svc (in process or a daemon's client). The model is loaded first so load
// time is not measured.
func Bench(ctx context.Context, svc Service, model string, levels []int, o BenchOptions) ([]BenchResult, error) {
	if o.Prompt == "" {
		o.Prompt = "Once upon a time"
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 128
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Temperature == 0 {
		o.Temperature = 0.8
	}
	if _, err := svc.Load(ctx, LoadRequest{Model: model}); err != nil {
		return nil, err
	}
	var out []BenchResult
	for _, n := range levels {
		if n <= 0 {
			return out, fmt.Errorf("concurrency %d: want a positive number", n)
		}
		r := benchLevel(ctx, svc, model, n, o)
		out = append(out, r)
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

func benchLevel(ctx context.Context, svc Service, model string, n int, o BenchOptions) BenchResult {
	res := BenchResult{Concurrency: n}
	var mu sync.Mutex
	var streamRate float64
	var streams int
	var prefill time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for w := range n {
		wg.Go(func() {
			for round := range o.Rounds {
				req := CompletionRequest{Model: model, Prompt: o.Prompt, AddSpecial: o.AddSpecial, Options: Options{
					MaxTokens: o.MaxTokens,
					Sampling:  sampling.Params{Temperature: o.Temperature, Seed: uint64(w*o.Rounds + round + 1)},
				}}
				r, err := svc.Complete(ctx, req, nil)
				mu.Lock()
				res.Requests++
				if err != nil {
					res.Errors++
					if res.FirstError == "" && !errors.Is(err, context.Canceled) {
						res.FirstError = err.Error()
					}
				}
				u := r.Usage
				res.PromptTokens += u.PromptTokens
				res.CachedTokens += u.CachedTokens
				res.CompletionTokens += u.CompletionTokens
				prefill += u.PrefillDuration
				if u.DecodeDuration > 0 && u.CompletionTokens > 1 {
					streamRate += float64(u.CompletionTokens-1) / u.DecodeDuration.Seconds()
					streams++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Wall = time.Since(start)
	if res.Wall > 0 {
		res.AggregateTokensPerSec = float64(res.CompletionTokens) / res.Wall.Seconds()
	}
	if streams > 0 {
		res.StreamTokensPerSec = streamRate / float64(streams)
	}
	if res.Requests > 0 {
		res.MeanPrefill = prefill / time.Duration(res.Requests)
	}
	return res
}
