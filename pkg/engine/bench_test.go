package engine

import (
	"context"
	"testing"
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
