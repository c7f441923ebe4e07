package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

func TestBenchCountsTokens(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	res, err := Bench(context.Background(), m, "toy", []int{1, 3}, BenchOptions{Prompt: "bench", MaxTokens: 12, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 6} {
		r := res[i]
		if r.Requests != want || r.Errors != 0 || r.CompletionTokens == 0 || r.AggregateTokensPerSec <= 0 {
			t.Errorf("level %d: %+v", r.Concurrency, r)
		}
	}
	if _, err := Bench(context.Background(), m, "toy", []int{0}, BenchOptions{}); err == nil {
		t.Error("concurrency 0 accepted")
	}
}

// BenchmarkConcurrencyStories260K reports aggregate decode tokens/s of the
// real CPU executor at concurrency 1, 2, 4 and 8.
func BenchmarkConcurrencyStories260K(b *testing.B) {
	model := fixtures.Path(b, "models", "stories260K.gguf")
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("c%d", n), func(b *testing.B) {
			m := newGGUFManager(b)
			var tps float64
			for b.Loop() {
				res, err := Bench(context.Background(), m, model, []int{n}, BenchOptions{MaxTokens: 128, AddSpecial: true})
				if err != nil || res[0].Errors > 0 {
					b.Fatalf("%v %+v", err, res)
				}
				tps = res[0].AggregateTokensPerSec
			}
			b.ReportMetric(tps, "tok/s")
		})
	}
}
