package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/synth"
	"github.com/helexa/helexa/pkg/sampling"
)

// TestDebugSynthShapes writes every shape at a reduced size and checks
// that it loads with the shape's hyperparameters and the real tokenizer's
// vocabulary, and generates: make test in one quant a shape (alternating),
// make test-all in both.
func TestDebugSynthShapes(t *testing.T) {
	for i, sh := range synth.Shapes() {
		for j, q := range []string{"q4_k_m", "q8_0"} {
			t.Run(sh.Name+"/"+q, func(t *testing.T) {
				if (i+j)%2 == 1 && !testAll {
					t.Skip("the other quant of this shape runs in make test-all")
				}
				out := filepath.Join(t.TempDir(), "m.gguf")
				opts := debugSynthOptions{Shape: sh.Name, Quant: q, Out: out, Layers: 2, Shrink: 4, Seed: 3,
					Vocab: fixtures.Path(t, sh.VocabFile)}
				if err := runDebugSynth(context.Background(), opts, streams{Out: io.Discard}); err != nil {
					t.Fatal(err)
				}
				ex, err := local.Load(context.Background(), out, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, NumBlocks: 8}})
				if err != nil {
					t.Fatal(err)
				}
				defer ex.Close()
				hp := ex.Model().HP
				if hp.NLayer != 2 || hp.HeadDim != sh.HeadDim || hp.NHead != sh.Heads/4 || hp.NEmbd != sh.Embd/4 ||
					hp.NExpert != sh.Experts || (sh.Arch == "qwen3" && hp.NVocab != 151936) || (sh.Arch == "llama" && hp.NVocab != 128256) {
					t.Errorf("hyperparameters %+v", hp)
				}
				s, err := executor.NewSession(ex, sampling.Params{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if toks, err := s.Generate(context.Background(), []int32{1, 2, 3}, 3); err != nil || len(toks) != 3 {
					t.Fatalf("generate: %v %v", toks, err)
				}
			})
		}
	}
}
