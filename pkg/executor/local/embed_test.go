package local_test

import (
	"context"
	"math"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

// embed runs tokens as one embedding work and returns the vector.
func embed(t *testing.T, ex executor.Executor, tokens []int32, mode executor.EmbedMode) []float32 {
	t.Helper()
	id, err := ex.NewSeq(sampling.Params{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.FreeSeq(id)
	res, err := ex.Step(context.Background(), []executor.Work{{Seq: id, Tokens: tokens, Blocks: []int32{0, 1, 2, 3},
		Embed: mode, EmbedFinal: true}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("%v %v", err, res[0].Err)
	}
	return res[0].Embedding
}

// TestEmbeddingPooling: embeddings are unit length, mean pooling over a
// prefill split into chunks equals the unsplit one, and last-token pooling
// is the last position's normalised hidden state (a one-token prompt pools
// the same either way).
func TestEmbeddingPooling(t *testing.T) {
	path := fixtures.Path(t, "models", "stories260K.gguf")
	whole, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 4, BlockSize: 16}})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	chunked, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 4, BlockSize: 16, ChunkSize: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer chunked.Close()
	tokens := []int32{1, 403, 407, 261, 498, 300, 270, 11}
	a, b := embed(t, whole, tokens, executor.EmbedMean), embed(t, chunked, tokens, executor.EmbedMean)
	var ss float64
	for i := range a {
		ss += float64(a[i]) * float64(a[i])
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			t.Fatalf("dim %d: chunked mean %v, whole %v", i, b[i], a[i])
		}
	}
	if math.Abs(ss-1) > 1e-5 {
		t.Errorf("norm² %v", ss)
	}
	last := embed(t, whole, tokens, executor.EmbedLast)
	if same(last, a) {
		t.Error("last-token and mean pooling agree on an 8-token prompt")
	}
	one := []int32{1}
	if m, l := embed(t, whole, one, executor.EmbedMean), embed(t, whole, one, executor.EmbedLast); !same(m, l) {
		t.Error("a one-token prompt pools differently by mean and last")
	}
}

func same(a, b []float32) bool {
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return len(a) == len(b)
}
