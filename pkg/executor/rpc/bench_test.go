package rpc

import (
	"context"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// BenchmarkStepOverhead measures what the process boundary adds to one
// decode step: a one-token step for each of b.N iterations, against a
// runner child process whose executor does no compute. The per-op time is
// the overhead a runner adds to every decode step (encoding, two pipe
// crossings, decoding), with 1 and 8 sequences in the batch.
func BenchmarkStepOverhead(b *testing.B) {
	for _, seqs := range []int{1, 8} {
		b.Run(map[int]string{1: "seqs=1", 8: "seqs=8"}[seqs], func(b *testing.B) {
			r := childRemote(b, 10*time.Second)
			batch := make([]executor.Work, seqs)
			for i := range batch {
				id, err := r.NewSeq(sampling.Params{})
				if err != nil {
					b.Fatal(err)
				}
				batch[i] = executor.Work{Seq: id, Tokens: []int32{1}, Pos: 100, Blocks: make([]int32, 8), Sample: true, SkipLogprob: true}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := r.Step(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
