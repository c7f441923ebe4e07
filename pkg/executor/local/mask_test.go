package local_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/arch/archtest"
	"github.com/helexa/helexa/pkg/sampling"
)

// maskVocab is not a multiple of 64, so the last mask word is partial.
const maskVocab = 130

func loadMaskModel(t *testing.T) *local.Executor {
	t.Helper()
	path, err := archtest.Write(t.TempDir(), archtest.Config{Type: dtype.Q8_0, Vocab: maskVocab})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 64, BlockSize: 8, NumBlocks: 16}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

func maskOf(ids ...int) []uint64 {
	m := make([]uint64, (maskVocab+63)/64)
	for _, id := range ids {
		m[id/64] |= 1 << (id % 64)
	}
	return m
}

// stepOne runs one prefill of prompt for a new sequence and returns its result.
func stepOne(t *testing.T, ex executor.Executor, p sampling.Params, w executor.Work) executor.Result {
	t.Helper()
	id, err := ex.NewSeq(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.FreeSeq(id)
	w.Seq, w.Blocks = id, []int32{0}
	res, err := ex.Step(context.Background(), []executor.Work{w})
	if err != nil {
		t.Fatalf("step failed as a whole: %v", err)
	}
	return res[0]
}

// logSoftmax is the reference log-probability of every token.
func logSoftmax(v []float32) []float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, float64(x))
	}
	var sum float64
	for _, x := range v {
		sum += math.Exp(float64(x) - m)
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) - m - math.Log(sum)
	}
	return out
}

// TestAllowedMask: Work.Allowed constrains the sampled token; logprobs stay
// on the raw logits.
func TestAllowedMask(t *testing.T) {
	ex := loadMaskModel(t)
	prompt := []int32{1, 5, 9, 77}
	free := stepOne(t, ex, sampling.Params{}, executor.Work{Tokens: prompt, Sample: true, TopLogprobs: 3, Logits: executor.LogitsLast})
	if free.Err != nil {
		t.Fatal(free.Err)
	}
	raw := free.Logits[0]
	lp := logSoftmax(raw)
	// the least likely token of the last (partial) word is the only one allowed
	worst := 128
	for id := 64; id < maskVocab; id++ {
		if raw[id] < raw[worst] {
			worst = id
		}
	}
	if int(free.Token) == worst {
		t.Fatalf("unconstrained greedy already picks %d", worst)
	}
	t.Run("greedy single token", func(t *testing.T) {
		res := stepOne(t, ex, sampling.Params{}, executor.Work{Tokens: prompt, Sample: true, TopLogprobs: 3,
			Logits: executor.LogitsLast, Allowed: maskOf(worst)})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if int(res.Token) != worst {
			t.Errorf("sampled %d, want the only allowed token %d", res.Token, worst)
		}
		if d := math.Abs(float64(res.Logprob) - lp[worst]); d > 1e-4 {
			t.Errorf("logprob %g, want the raw %g", res.Logprob, lp[worst])
		}
		if !slices.Equal(res.Top, free.Top) {
			t.Errorf("top logprobs %v, want the unconstrained %v", res.Top, free.Top)
		}
		if !slices.Equal(res.Logits[0], raw) {
			t.Error("returned logits were modified by the mask")
		}
	})
	t.Run("sampling stays in the set", func(t *testing.T) {
		set := []int{0, 63, 64, 100, 129}
		for seed := range uint64(40) {
			p := sampling.Params{Temperature: 1.5, TopK: 50, RepeatPenalty: 1.3, Seed: seed}
			res := stepOne(t, ex, p, executor.Work{Tokens: prompt, Sample: true, Allowed: maskOf(set...)})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if !slices.Contains(set, int(res.Token)) {
				t.Fatalf("seed %d: sampled %d outside %v", seed, res.Token, set)
			}
		}
	})
}

// TestAllowedMaskBad: a malformed mask fails only its own sequence.
func TestAllowedMaskBad(t *testing.T) {
	ex := loadMaskModel(t)
	good, _ := ex.NewSeq(sampling.Params{})
	bad, _ := ex.NewSeq(sampling.Params{})
	outside := maskOf()
	outside[2] = 1 << 5 // token 133 is past the vocabulary
	tests := []struct {
		name string
		mask []uint64
	}{
		{"too short", []uint64{^uint64(0), ^uint64(0)}},
		{"too long", []uint64{^uint64(0), ^uint64(0), ^uint64(0), 0}},
		{"empty slice", []uint64{}},
		{"nothing allowed", maskOf()},
		{"only ids past the vocabulary", outside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ex.Step(context.Background(), []executor.Work{
				{Seq: bad, Tokens: []int32{1}, Blocks: []int32{1}, Sample: true, Allowed: tt.mask},
				{Seq: good, Tokens: []int32{1, 2}, Blocks: []int32{0}, Sample: true, Allowed: maskOf(7)},
			})
			if err != nil {
				t.Fatalf("step failed as a whole: %v", err)
			}
			if !errors.Is(res[0].Err, executor.ErrBadRequest) {
				t.Errorf("bad mask: err %v, want ErrBadRequest", res[0].Err)
			}
			if res[1].Err != nil || res[1].Token != 7 {
				t.Errorf("good work: token %d, err %v; want 7", res[1].Token, res[1].Err)
			}
		})
	}
}

// TestSkipLogprob: Work.SkipLogprob draws the same token (with and without
// a token mask, greedy and seeded sampling) and only leaves Logprob 0;
// without it Logprob is the raw log-softmax of the token.
func TestSkipLogprob(t *testing.T) {
	ex := loadMaskModel(t)
	prompt := []int32{1, 7, 9, 4}
	tests := []struct {
		name string
		p    sampling.Params
		mask []uint64
	}{
		{"greedy", sampling.Params{}, nil},
		{"seeded", sampling.Params{Temperature: 1.5, TopP: 0.95, Seed: 11}, nil},
		{"greedy masked", sampling.Params{}, maskOf(3, 64, 129)},
		{"seeded masked", sampling.Params{Temperature: 2, Seed: 12}, maskOf(0, 5, 70, 71, 128)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := executor.Work{Tokens: prompt, Sample: true, Logits: executor.LogitsLast, Allowed: tt.mask}
			with := stepOne(t, ex, tt.p, w)
			w.SkipLogprob = true
			without := stepOne(t, ex, tt.p, w)
			if with.Err != nil || without.Err != nil {
				t.Fatalf("errors %v / %v", with.Err, without.Err)
			}
			if with.Token != without.Token || without.Logprob != 0 {
				t.Errorf("SkipLogprob: token %d logprob %g, without it token %d", without.Token, without.Logprob, with.Token)
			}
			want := logSoftmax(with.Logits[0])[with.Token]
			if d := math.Abs(float64(with.Logprob) - want); d > 1e-4 {
				t.Errorf("logprob %g, want the raw %g", with.Logprob, want)
			}
		})
	}
}
