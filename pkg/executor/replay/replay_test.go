package replay

import (
	"context"
	"slices"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
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

// TestText: the wrapper scripts the text as the model's tokenizer encodes
// it, special tokens parsed, then end of sequence.
func TestText(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", "vocab-llama3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	const text = "Hi there<|eot_id|>"
	want, err := tok.Encode(text, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if eot, ok := tok.TokenID("<|eot_id|>"); !ok || want[len(want)-1] != eot {
		t.Fatalf("encoding %q = %v: the special token was not parsed", text, want)
	}
	if tok.EOS() == tokenizer.NoToken {
		t.Fatal("vocab-llama3 has no end-of-sequence token")
	}
	want = append(want, tok.EOS())
	ex, err := Text(text)(&fake{}, tok)
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := ex.NewSeq(sampling.Params{})
	var got []int32
	for range want {
		res, err := ex.Step(context.Background(), []executor.Work{{Seq: seq, Sample: true}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res[0].Token)
	}
	if !slices.Equal(got, want) {
		t.Errorf("scripted tokens %v, want %v", got, want)
	}
}

// TestSplit: separator lines split a replay file into answers; a file
// without one is one answer, kept byte for byte.
func TestSplit(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one answer", "Hello.\n", []string{"Hello.\n"}},
		{"two answers", "call\n" + Separator + "\ndone", []string{"call", "done"}},
		{"crlf", "a\r\n" + Separator + "\r\nb", []string{"a\r", "b"}},
		{"separator inside a line is text", "x " + Separator + " y", []string{"x " + Separator + " y"}},
		{"trailing separator", "a\n" + Separator + "\n", []string{"a", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Split(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSequence: the n-th sequence samples the n-th script, sequences
// past the last take the last, and live sequences keep their own.
func TestSequence(t *testing.T) {
	e := NewSequence(&fake{}, [][]int32{{1, 2}, {3}})
	ctx := context.Background()
	a, _ := e.NewSeq(sampling.Params{})
	b, _ := e.NewSeq(sampling.Params{})
	c, _ := e.NewSeq(sampling.Params{})
	all := []executor.Work{{Seq: a, Sample: true}, {Seq: b, Sample: true}, {Seq: c, Sample: true}}
	want := [][]int32{{1, 3, 3}, {2, 99, 99}}
	for i, w := range want {
		res, err := e.Step(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		got := []int32{res[0].Token, res[1].Token, res[2].Token}
		if !slices.Equal(got, w) {
			t.Errorf("step %d: tokens %v, want %v", i, got, w)
		}
	}
}
