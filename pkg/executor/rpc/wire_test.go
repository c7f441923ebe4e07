package rpc

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
)

// TestWorkCrossesTheWire: every field of a work survives the wire form
// and JSON, the window table and the state snapshot fields included.
func TestWorkCrossesTheWire(t *testing.T) {
	w := executor.Work{Seq: 3, Tokens: []int32{1, 2}, Pos: 40, Blocks: []int32{0, 1, 2}, WinBlocks: []int32{-1, 5, 6},
		LoadState: 7, SaveState: 8, DropStates: []uint64{2, 3}, History: []int32{9}, Sample: true, SkipLogprob: true,
		TopLogprobs: 2, Logits: executor.LogitsLast, Allowed: []uint64{1, 1 << 63}, Embed: executor.EmbedMean, EmbedFinal: true}
	raw, err := json.Marshal(toWireWork(w))
	if err != nil {
		t.Fatal(err)
	}
	var ww wireWork
	if err := json.Unmarshal(raw, &ww); err != nil {
		t.Fatal(err)
	}
	got, err := ww.work()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("after the wire %+v, want %+v", got, w)
	}
}

// TestLoadParamsCrossTheWire: every load option survives JSON, beside the
// path at the top level of the request's params (the form a runner of an
// earlier build reads too).
func TestLoadParamsCrossTheWire(t *testing.T) {
	p := LoadParams{Path: "/m.gguf", LoadOptions: executor.LoadOptions{NumCtx: 1, BlockSize: 2, NumBlocks: 3, WinBlocks: 4,
		Parallel: 5, KVBudget: 6, Threads: 7, ChunkSize: 8, KVType: "f16", TP: 9}}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(raw, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"path", "num_ctx", "block_size", "num_blocks", "win_blocks", "parallel", "kv_budget", "threads",
		"chunk_size", "kv_type", "tp"} {
		if _, ok := flat[k]; !ok {
			t.Errorf("%s lacks the top-level field %q", raw, k)
		}
	}
	var got LoadParams
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got != p {
		t.Errorf("after the wire %+v, want %+v", got, p)
	}
}
