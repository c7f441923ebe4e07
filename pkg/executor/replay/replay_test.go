package replay

import (
	"context"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// fake samples token 99 for every sampling work item.
type fake struct {
	executor.Executor // nil: only the methods below are called
	seqs              executor.SeqID
	freed             []executor.SeqID
}

func (f *fake) NewSeq(sampling.Params) (executor.SeqID, error) { f.seqs++; return f.seqs, nil }
func (f *fake) FreeSeq(id executor.SeqID)                      { f.freed = append(f.freed, id) }
func (f *fake) Step(_ context.Context, b []executor.Work) ([]executor.Result, error) {
	out := make([]executor.Result, len(b))
	for i, w := range b {
		out[i] = executor.Result{Seq: w.Seq, Token: 99}
	}
	return out, nil
}

// TestReplay: each sequence gets the script from its start, prefill steps
// without sampling leave it untouched, and the wrapped tokens follow it.
func TestReplay(t *testing.T) {
	inner := &fake{}
	e := New(inner, []int32{5, 6})
	ctx := context.Background()
	a, _ := e.NewSeq(sampling.Params{})
	b, _ := e.NewSeq(sampling.Params{})
	steps := []struct {
		batch []executor.Work
		want  []int32
	}{
		{[]executor.Work{{Seq: a, Sample: false}, {Seq: b, Sample: true}}, []int32{99, 5}},
		{[]executor.Work{{Seq: a, Sample: true}, {Seq: b, Sample: true}}, []int32{5, 6}},
		{[]executor.Work{{Seq: a, Sample: true}, {Seq: b, Sample: true}}, []int32{6, 99}},
	}
	for i, s := range steps {
		res, err := e.Step(ctx, s.batch)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range res {
			if r.Token != s.want[j] {
				t.Errorf("step %d seq %d: token %d, want %d", i, r.Seq, r.Token, s.want[j])
			}
		}
	}
	e.FreeSeq(a)
	if len(inner.freed) != 1 || inner.freed[0] != a {
		t.Errorf("FreeSeq not passed on: %v", inner.freed)
	}
}
