package local

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/sampling"
)

func TestPlanPasses(t *testing.T) {
	batch := []executor.Work{{Tokens: make([]int32, 10)}, {Tokens: make([]int32, 1)}, {Tokens: make([]int32, 3)}, {Tokens: make([]int32, 5)}}
	ok := []bool{true, true, false, true}
	got := planPasses(batch, ok, 4)
	want := [][]piece{
		{{0, 0, 4}},
		{{0, 4, 4}},
		{{0, 8, 2}, {1, 0, 1}, {3, 0, 1}},
		{{3, 1, 4}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("passes %v, want %v", got, want)
	}
}

// panicSampler stands for a sampler bug.
type panicSampler struct{ seqSampler }

func (panicSampler) Accept(...int32) {}
func (panicSampler) Sample([]float32) (int32, float32, error) {
	panic("sampler bug")
}
func (panicSampler) SampleToken([]float32) (int32, error) {
	panic("sampler bug")
}
func (panicSampler) IsArgMax() bool { panic("sampler bug") } // asked before the pass's greedy tokens

// TestSamplerPanic: a panic while sampling one sequence fails only that
// sequence's result, and the model keeps working.
func TestSamplerPanic(t *testing.T) {
	ctx := context.Background()
	path, err := archtest.Write(t.TempDir(), archtest.Config{Type: dtype.Q4_K, Embd: 256, FF: 256})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(ctx, path, Options{LoadOptions: executor.LoadOptions{NumCtx: 32, BlockSize: 8, NumBlocks: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, skip := range []bool{false, true} { // Sample and SampleToken
		bad, _ := l.NewSeq(sampling.Params{})
		good, _ := l.NewSeq(sampling.Params{})
		l.seqs[bad].sampler = panicSampler{}
		res, err := l.Step(ctx, []executor.Work{
			{Seq: bad, Tokens: []int32{1, 2}, Blocks: []int32{0}, Sample: true, SkipLogprob: skip},
			{Seq: good, Tokens: []int32{1, 2}, Blocks: []int32{1}, Sample: true, SkipLogprob: skip},
		})
		if err != nil {
			t.Fatalf("skip %v: step failed as a whole: %v", skip, err)
		}
		if res[0].Err == nil || res[1].Err != nil {
			t.Errorf("skip %v: errors %v / %v, want only the first", skip, res[0].Err, res[1].Err)
		}
		if errors.Is(res[0].Err, executor.ErrDevice) {
			t.Errorf("skip %v: sampler panic reported as a device failure: %v", skip, res[0].Err)
		}
		l.FreeSeq(bad)
		l.FreeSeq(good)
	}
}
