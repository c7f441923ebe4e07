package local_test

import (
	"context"
	"errors"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/synth/synthtest"
	"github.com/helexa/helexa/pkg/sampling"
)

// TestRecurrentSequences: a qwen35 sequence carries its recurrent state
// from step to step: a step that does not continue where the state is
// (a cached prefix, a skipped position) is the request's own error, a step
// at position 0 starts the sequence afresh, two sequences batched together
// equal each alone, and the pool's KV holds only the attention layers.
func TestRecurrentSequences(t *testing.T) {
	ctx := context.Background()
	ex := loadQwen35Tiny(t)
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

// loadQwen35Tiny writes an F32 qwen35-tiny model and loads it with 8-position
// blocks and 3-token passes.
func loadQwen35Tiny(t *testing.T) *local.Executor {
	t.Helper()
	path := synthtest.Write(t, "qwen35-tiny", "f32", 3)
	ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, BlockSize: 8, NumBlocks: 16, ChunkSize: 3}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex
}

// TestRecurrentStateSnapshots: a state saved after a work (Work.SaveState)
// lets another sequence resume there (LoadState) with the KV pages of the
// shared prefix, giving the logits of the sequence that saved it; a
// snapshot that is unknown, dropped or at another position is the
// request's own error; snapshots count in the executor's memory.
func TestRecurrentStateSnapshots(t *testing.T) {
	ctx := context.Background()
	ex := loadQwen35Tiny(t)
	info := ex.Info()
	if !info.StateSnapshots {
		t.Fatalf("info %+v: no state snapshots", info)
	}
	prompt := []int32{1, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130}
	step := func(w executor.Work) executor.Result {
		t.Helper()
		w.Logits = executor.LogitsLast
		res, err := ex.Step(ctx, []executor.Work{w})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	a, _ := ex.NewSeq(sampling.Params{})
	if r := step(executor.Work{Seq: a, Tokens: prompt[:8], Blocks: []int32{0, 1}, SaveState: 7}); r.Err != nil {
		t.Fatal(r.Err)
	}
	whole := step(executor.Work{Seq: a, Tokens: prompt[8:], Pos: 8, Blocks: []int32{0, 1}})
	b, _ := ex.NewSeq(sampling.Params{})
	resumed := step(executor.Work{Seq: b, Tokens: prompt[8:], Pos: 8, Blocks: []int32{0, 2}, LoadState: 7, History: prompt[:8]})
	if whole.Err != nil || resumed.Err != nil || maxAbsDiff(resumed.Logits[0], whole.Logits[0]) != 0 {
		t.Fatalf("resumed from the snapshot: %v, %v, logits differ by %g", whole.Err, resumed.Err, maxAbsDiff(resumed.Logits[0], whole.Logits[0]))
	}
	c, _ := ex.NewSeq(sampling.Params{})
	for _, tt := range []struct {
		name string
		w    executor.Work
	}{
		{"unknown snapshot", executor.Work{Seq: c, Tokens: prompt[8:], Pos: 8, Blocks: []int32{0, 3}, LoadState: 9}},
		{"snapshot at another position", executor.Work{Seq: c, Tokens: prompt[9:], Pos: 9, Blocks: []int32{0, 3}, LoadState: 7}},
	} {
		if r := step(tt.w); !errors.Is(r.Err, executor.ErrBadRequest) {
			t.Errorf("%s: %v, want a bad request", tt.name, r.Err)
		}
	}
	kv := 16 * info.BlockBytes
	if got := ex.Memory().KVBytes; got != kv+4*info.StateBytes {
		t.Errorf("KV bytes %d with three sequences and a snapshot, want %d", got, kv+4*info.StateBytes)
	}
	if r := step(executor.Work{Seq: c, Tokens: prompt[:3], Blocks: []int32{3}, DropStates: []uint64{7}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := ex.Memory().KVBytes; got != kv+3*info.StateBytes {
		t.Errorf("KV bytes %d after dropping the snapshot, want %d", got, kv+3*info.StateBytes)
	}
	d, _ := ex.NewSeq(sampling.Params{})
	if r := step(executor.Work{Seq: d, Tokens: prompt[8:], Pos: 8, Blocks: []int32{0, 4}, LoadState: 7}); !errors.Is(r.Err, executor.ErrBadRequest) {
		t.Errorf("a dropped snapshot: %v, want a bad request", r.Err)
	}
}
