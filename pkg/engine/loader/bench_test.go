package loader

import (
	"context"
	"fmt"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
)

// BenchmarkConcurrencyStories260K reports aggregate decode tokens/s of the
// real CPU executor at concurrency 1, 2, 4 and 8.
func BenchmarkConcurrencyStories260K(b *testing.B) {
	model := fixtures.Path(b, "models", "stories260K.gguf")
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("c%d", n), func(b *testing.B) {
			m := newFilesManager(b)
			var tps float64
			for b.Loop() {
				res, err := engine.Bench(context.Background(), m, model, []int{n}, engine.BenchOptions{MaxTokens: 128, AddSpecial: true})
				if err != nil || res[0].Errors > 0 {
					b.Fatalf("%v %+v", err, res)
				}
				tps = res[0].AggregateTokensPerSec
			}
			b.ReportMetric(tps, "tok/s")
		})
	}
}
