package local_test

import (
	"context"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

var benchModels = []string{"stories260K.gguf", "llama-q-Q4_K_M.gguf", "llama-q-Q8_0.gguf", "qwen3-tiny-Q8_0.gguf", "qwen3moe-tiny-Q4_K_M.gguf"}

// BenchmarkDecode measures single-sequence greedy decode after a 32-token
// prompt (tokens/s), with the sampled token's logprob (what a caller that
// reports logprobs pays) and without it (Work.SkipLogprob).
func BenchmarkDecode(b *testing.B) {
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			const ctxLen = 256
			ex := loadFixture(b, model, local.Options{LoadOptions: executor.LoadOptions{NumCtx: ctxLen, NumBlocks: ctxLen / 16}})
			b.Run("logprob", func(b *testing.B) { benchDecode(b, ex, ctxLen, false) })
			b.Run("no-logprob", func(b *testing.B) { benchDecode(b, ex, ctxLen, true) })
		})
	}
}

func benchDecode(b *testing.B, ex executor.Executor, ctxLen int, noLogprob bool) {
	ctx := context.Background()
	var s *executor.Session
	var tok int32
	start := func() {
		if s != nil {
			s.Close()
		}
		var err error
		if s, err = executor.NewSession(ex, sampling.Params{}); err != nil {
			b.Fatal(err)
		}
		s.NoLogprob = noLogprob
		res, err := s.Prefill(ctx, paragraph[:32], executor.LogitsNone)
		if err != nil {
			b.Fatal(err)
		}
		tok = res.Token
	}
	start()
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() == ctxLen {
			b.StopTimer()
			start()
			b.StartTimer()
		}
		// One token in, one sampled token out, no logits returned: the
		// scheduler's decode step.
		res, err := s.Prefill(ctx, []int32{tok}, executor.LogitsNone)
		if err != nil {
			b.Fatal(err)
		}
		tok = res.Token
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkPrefill measures a 40-token prefill (tokens/s).
func BenchmarkPrefill(b *testing.B) {
	ctx := context.Background()
	for _, model := range benchModels {
		b.Run(model, func(b *testing.B) {
			ex := loadFixture(b, model, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 4}})
			for i := 0; i < b.N; i++ {
				s, err := executor.NewSession(ex, sampling.Params{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Prefill(ctx, paragraph, executor.LogitsNone); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.N*len(paragraph))/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
