package sampling

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSampleErrors(t *testing.T) {
	cases := []struct {
		name   string
		p      Params
		vocab  int
		logits []float32
		want   error
	}{
		{"short vector", Params{}, 4, []float32{1, 2}, ErrBadLogits},
		{"long vector", Params{Temperature: 1}, 1, []float32{1, 2}, ErrBadLogits},
		{"all NaN", Params{}, 2, []float32{nan, nan}, ErrBadLogits},
		{"all Inf", Params{Temperature: 1}, 3, []float32{inf, -inf, nan}, ErrBadLogits},
		{"every token banned", Params{Temperature: 1, LogitBias: map[int32]float32{0: -inf, 1: -inf}}, 2, []float32{1, 2}, ErrBadLogits},
		{"bias outside vocab", Params{LogitBias: map[int32]float32{5: 1}}, 2, []float32{1, 2}, ErrInvalidParams},
		{"zero vocab", Params{}, 0, nil, ErrInvalidParams},
		{"NaN temperature", Params{Temperature: nan}, 2, []float32{1, 2}, ErrInvalidParams},
		{"negative top-k", Params{TopK: -1}, 2, []float32{1, 2}, ErrInvalidParams},
		{"top-p above 1", Params{TopP: 1.5}, 2, []float32{1, 2}, ErrInvalidParams},
		{"negative min-p", Params{MinP: -0.1}, 2, []float32{1, 2}, ErrInvalidParams},
		{"negative repeat penalty", Params{RepeatPenalty: -1}, 2, []float32{1, 2}, ErrInvalidParams},
		{"repeat_last_n -2", Params{RepeatLastN: -2}, 2, []float32{1, 2}, ErrInvalidParams},
		{"infinite presence", Params{PresencePenalty: inf}, 2, []float32{1, 2}, ErrInvalidParams},
		{"NaN bias", Params{LogitBias: map[int32]float32{0: nan}}, 2, []float32{1, 2}, ErrInvalidParams},
		{"negative bias id", Params{LogitBias: map[int32]float32{-1: 1}}, 2, []float32{1, 2}, ErrInvalidParams},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := New(c.p, c.vocab).Sample(c.logits)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestSampleDoesNotModifyLogits(t *testing.T) {
	logits := []float32{1, 2, 3, nan, -inf}
	orig := slices.Clone(logits)
	s := New(Params{Temperature: 0.7, TopK: 3, TopP: 0.9, MinP: 0.01, RepeatPenalty: 1.3, LogitBias: map[int32]float32{0: 2}}, len(logits))
	s.Accept(1, 2)
	for range 10 {
		if _, _, err := s.Sample(logits); err != nil {
			t.Fatal(err)
		}
	}
	for i := range logits {
		if math.Float32bits(logits[i]) != math.Float32bits(orig[i]) {
			t.Fatalf("logits changed: %v", logits)
		}
	}
}

func TestLogprobIsRawLogSoftmax(t *testing.T) {
	logits := []float32{0.5, 2, -1, 1.5}
	var z float64
	for _, x := range logits {
		z += math.Exp(float64(x))
	}
	for _, p := range []Params{{}, {Temperature: 0.3, LogitBias: map[int32]float32{2: 10}}, {Temperature: 2, RepeatPenalty: 3, PresencePenalty: 1}} {
		s := New(p, len(logits))
		s.Accept(1)
		for range 20 {
			tok, lp, err := s.Sample(logits)
			if err != nil {
				t.Fatal(err)
			}
			want := float64(logits[tok]) - math.Log(z)
			if math.Abs(float64(lp)-want) > 1e-6 {
				t.Fatalf("params %+v token %d: logprob %v, want %v", p, tok, lp, want)
			}
		}
	}
}

func TestTopLogprobs(t *testing.T) {
	logits := []float32{1, 3, 3, nan, 2, -inf}
	var z float64
	for _, x := range []float64{1, 3, 3, 2} {
		z += math.Exp(x)
	}
	s := New(Params{}, len(logits))
	got := s.TopLogprobs(logits, 3)
	wantIDs := []int32{1, 2, 4}
	if len(got) != 3 {
		t.Fatalf("got %v", got)
	}
	for i, g := range got {
		want := float32(float64(logits[wantIDs[i]]) - math.Log(z))
		if g.Token != wantIDs[i] || math.Abs(float64(g.Logprob-want)) > 1e-6 {
			t.Errorf("entry %d = %+v, want token %d logprob %v", i, g, wantIDs[i], want)
		}
	}
	if all := s.TopLogprobs(logits, 100); len(all) != 4 || all[3].Token != 0 {
		t.Errorf("n above the finite count: %v", all)
	}
	if s.TopLogprobs(logits, 0) != nil || s.TopLogprobs([]float32{nan}, 2) != nil {
		t.Error("n=0 or no finite logits should give nil")
	}
}

func sampleN(t *testing.T, p Params, logits []float32, n int) []int32 {
	t.Helper()
	s := New(p, len(logits))
	out := make([]int32, n)
	for i := range out {
		tok, _, err := s.Sample(logits)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = tok
	}
	return out
}

func TestSeedReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	p := Params{Temperature: 1.2, TopP: 0.95, Seed: 42}
	a := sampleN(t, p, logits, 200)
	b := sampleN(t, p, logits, 200)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different tokens")
	}
	p.Seed = 43
	if c := sampleN(t, p, logits, 200); slices.Equal(a, c) {
		t.Fatal("different seeds gave the same 200 tokens")
	}
}

// TestTemperatureDistribution checks the empirical distribution against
// softmax(logits/T) with a deterministic seed.
func TestTemperatureDistribution(t *testing.T) {
	logits := []float32{1, 0.5, 0, -1}
	cases := []struct {
		name string
		p    Params
		want []float64
	}{
		{"T=1", Params{Temperature: 1}, softmax(logits, 1)},
		{"T=0.5", Params{Temperature: 0.5}, softmax(logits, 0.5)},
		{"T=2", Params{Temperature: 2}, softmax(logits, 2)},
		{"top-k 2 at T=1", Params{Temperature: 1, TopK: 2}, softmax([]float32{1, 0.5}, 1)},
	}
	const n = 40000
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.p.Seed = 7
			counts := make([]float64, len(logits))
			for _, tok := range sampleN(t, c.p, logits, n) {
				counts[tok]++
			}
			for i := range counts {
				var want float64
				if i < len(c.want) {
					want = c.want[i]
				}
				got := counts[i] / n
				if math.Abs(got-want) > 0.01 {
					t.Errorf("token %d: frequency %.4f, want %.4f", i, got, want)
				}
			}
		})
	}
}

func softmax(x []float32, temp float64) []float64 {
	out := make([]float64, len(x))
	var z float64
	for i, v := range x {
		out[i] = math.Exp(float64(v) / temp)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}

func benchLogits(n int) []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64()) * 3
	}
	return out
}

// BenchmarkSample measures one Sample call on a Qwen-sized (151936) vocab.
func BenchmarkSample(b *testing.B) {
	logits := benchLogits(151936)
	history := make([]int32, 256)
	for i := range history {
		history[i] = int32(i * 97)
	}
	cases := []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"greedy-token-only", Params{}},
		{"temperature", Params{Temperature: 0.8}},
		{"top-p", Params{Temperature: 0.8, TopP: 0.95}},
		{"top-k-top-p-min-p", Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}},
		{"penalties-top-p", Params{Temperature: 0.8, TopP: 0.9, RepeatPenalty: 1.1, PresencePenalty: 0.5, FrequencyPenalty: 0.5}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := New(c.p, len(logits))
			s.Accept(history...)
			if strings.HasSuffix(c.name, "-token-only") {
				for b.Loop() {
					if _, err := s.SampleToken(logits); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			for b.Loop() {
				if _, _, err := s.Sample(logits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("top-logprobs-20", func(b *testing.B) {
		s := New(Params{}, len(logits))
		for b.Loop() {
			s.TopLogprobs(logits, 20)
		}
	})
}

// TestSampleTokenMatchesSample: SampleToken picks exactly Sample's tokens
// (same seed, same history) and fails the same way; it only skips the
// logprob.
func TestSampleTokenMatchesSample(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	steps := make([][]float32, 60)
	for i := range steps {
		steps[i] = make([]float32, 2000)
		for j := range steps[i] {
			steps[i][j] = float32(r.NormFloat64()) * 2
		}
		steps[i][r.IntN(2000)] = nan
	}
	cases := []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"greedy with penalties", Params{RepeatPenalty: 1.3, FrequencyPenalty: 0.2}},
		{"temperature", Params{Temperature: 0.9, Seed: 1}},
		{"top-p", Params{Temperature: 1.1, TopP: 0.9, Seed: 2}},
		{"top-k min-p", Params{Temperature: 0.7, TopK: 30, MinP: 0.05, Seed: 3}},
		{"bias and penalties", Params{Temperature: 1, TopP: 0.95, RepeatPenalty: 1.2, PresencePenalty: 0.5,
			LogitBias: map[int32]float32{7: 3, 9: -inf}, Seed: 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := New(c.p, 2000), New(c.p, 2000)
			for i, logits := range steps {
				want, _, errA := a.Sample(logits)
				got, errB := b.SampleToken(logits)
				if got != want || (errA == nil) != (errB == nil) {
					t.Fatalf("step %d: SampleToken %d (%v), Sample %d (%v)", i, got, errB, want, errA)
				}
				a.Accept(want)
				b.Accept(got)
			}
		})
	}
	for _, bad := range [][]float32{{1, 2}, {nan, nan, nan}} {
		s := New(Params{}, 3)
		if _, err := s.SampleToken(bad); !errors.Is(err, ErrBadLogits) {
			t.Errorf("SampleToken(%v): %v, want ErrBadLogits", bad, err)
		}
	}
	if _, err := New(Params{TopP: 2}, 3).SampleToken([]float32{1, 2, 3}); !errors.Is(err, ErrInvalidParams) {
		t.Errorf("invalid params: %v", err)
	}
}
