package local_test

import (
	"context"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
)

// TestF16KVCache runs fixture models over an F16 KV cache: half the
// block bytes, and llama.cpp's F32-cache references still hold within the
// quantized models' tolerance (F16 rounding of keys and values moves
// logits by about 1e-3).
func TestF16KVCache(t *testing.T) {
	for _, name := range []string{"llama-q-F32", "qwen2-tiny-F32", "qwen3-tiny-Q8_0"} {
		t.Run(name, func(t *testing.T) {
			f32 := loadFixture(t, name+".gguf", local.Options{LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks}})
			open := func(t *testing.T, path string) (executor.Executor, *routeRecorder) {
				ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: refNumCtx, NumBlocks: refNumBlocks, KVType: "f16"}})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := ex.Info().BlockBytes, f32.Info().BlockBytes/2; got != want {
					t.Errorf("F16 block bytes %d, want %d", got, want)
				}
				return ex, nil
			}
			checkReferenceModel(t, name, tolQuant, open)
		})
	}
	if _, err := local.Load(context.Background(), fixtures.Path(t, "models", "llama-q-F32.gguf"), local.Options{LoadOptions: executor.LoadOptions{KVType: "q8"}}); err == nil {
		t.Error("KV type q8 accepted")
	}
}
