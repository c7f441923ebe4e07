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
