package cpuexec_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/cpuexec"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/synth"
	"github.com/helexa/helexa/pkg/sampling"
)

// TestRecurrentSequences: a qwen35 sequence carries its recurrent state
// from step to step: a step that does not continue where the state is
// (a cached prefix, a skipped position) is the request's own error, a step
// at position 0 starts the sequence afresh, two sequences batched together
// equal each alone, and the pool's KV holds only the attention layers.
func TestRecurrentSequences(t *testing.T) {
	ctx := context.Background()
	sh, err := synth.ShapeNamed("qwen35-tiny")
	if err != nil {
		t.Fatal(err)
	}
	v, err := gguf.Open(fixtures.Path(t, sh.VocabFile))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	path := filepath.Join(t.TempDir(), "q35.gguf")
	if err := synth.Write(path, synth.Options{Shape: sh, Quant: "f32", Vocab: v, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	ex, err := cpuexec.Load(ctx, path, cpuexec.Options{NumCtx: 64, BlockSize: 8, NumBlocks: 16, ChunkSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	info := ex.Info()
	// 8 layers, 2 of them attention: 2 × 2 (k, v) × 8 positions × 128 × 4 bytes
	if !info.Recurrent || info.BlockBytes != 2*2*8*128*4 || info.StateBytes != 6*(3*256+4*32*32)*4 {
		t.Fatalf("info %+v", info)
	}
	prompt := []int32{1, 40, 50, 60, 70, 80, 90}
	step := func(seq executor.SeqID, pos int, toks []int32) executor.Result {
		t.Helper()
		res, err := ex.Step(ctx, []executor.Work{{Seq: seq, Tokens: toks, Pos: pos, Blocks: []int32{0}, Logits: executor.LogitsLast}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	a, _ := ex.NewSeq(sampling.Params{})
	whole := step(a, 0, prompt)
	if whole.Err != nil {
		t.Fatal(whole.Err)
	}
	if r := step(a, 3, prompt[3:]); !errors.Is(r.Err, executor.ErrBadRequest) {
		t.Errorf("resuming behind the state: %v, want a bad request", r.Err)
	}
	again := step(a, 0, prompt[:4])
	rest := step(a, 4, prompt[4:])
	if again.Err != nil || rest.Err != nil || maxAbsDiff(rest.Logits[0], whole.Logits[0]) > 1e-5 {
		t.Errorf("restart at 0 then continue: %v, %v, logits differ by %g", again.Err, rest.Err, maxAbsDiff(rest.Logits[0], whole.Logits[0]))
	}
	b, _ := ex.NewSeq(sampling.Params{})
	c, _ := ex.NewSeq(sampling.Params{})
	res, err := ex.Step(ctx, []executor.Work{
		{Seq: b, Tokens: prompt, Blocks: []int32{1}, Logits: executor.LogitsLast},
		{Seq: c, Tokens: prompt[:5], Blocks: []int32{2}, Logits: executor.LogitsLast},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ex.NewSeq(sampling.Params{})
	alone := step(d, 0, prompt[:5])
	if maxAbsDiff(res[0].Logits[0], whole.Logits[0]) > 1e-5 || maxAbsDiff(res[1].Logits[0], alone.Logits[0]) > 1e-5 {
		t.Errorf("batched sequences differ from alone")
	}
	ex.FreeSeq(b)
	if mem := ex.Memory(); mem.KVBytes != 16*info.BlockBytes+3*info.StateBytes {
		t.Errorf("KV bytes %d with 3 live sequences, want %d", mem.KVBytes, 16*info.BlockBytes+3*info.StateBytes)
	}
}
