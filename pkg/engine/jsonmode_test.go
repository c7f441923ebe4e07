package engine

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

func TestJSONStatePrefixes(t *testing.T) {
	tests := []struct {
		text  string
		ok    bool
		done  bool
		close int // close cost after text, when ok
	}{
		{``, true, false, 2},
		{`{`, true, false, 1},
		{`{}`, true, true, 0},
		{` {"a": 1}`, true, true, 0},
		{`{"a":`, true, false, 2},
		{`{"a"`, true, false, 3},
		{`{"a`, true, false, 4},
		{`{"a":[1, 2.5e-3, -0, true, null, "x\"\u00e9"]`, true, false, 1},
		{`{"a":{"b":[{}]}}`, true, true, 0},
		{`{"a":"é🙂"}`, true, true, 0},
		{`{"a":1,`, true, false, 5},
		{`{"a":-`, true, false, 2},
		{`{"a":tr`, true, false, 3},
		{`[`, false, false, 0},
		{`{}x`, false, false, 0},
		{`{"a" 1}`, false, false, 0},
		{`{"a":01}`, false, false, 0},
		{`{"a":1.}`, false, false, 0},
		{`{"a":tx}`, false, false, 0},
		{`{,}`, false, false, 0},
		{`{"a":1,}`, false, false, 0},
		{`{"a":[1,]}`, false, false, 0},
		{"{\"a\":\"\n\"}", false, false, 0},
		{`{"a":"\x"}`, false, false, 0},
		{`{"a":"\u12g4"}`, false, false, 0},
		{"{\"a\":\"\xff\"}", false, false, 0},
		{`{"a":1]`, false, false, 0},
		{`{"a":12345678901234567}`, true, true, 0},
		{`{"a":123456789012345678}`, false, false, 0},
		{`{"a":1e99}`, true, true, 0},
		{`{"a":1e999}`, false, false, 0},
		{"{                     }", false, false, 0}, // whitespace run over the cap
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var s jsonState
			ok := s.feed([]byte(tt.text))
			if ok != tt.ok {
				t.Fatalf("feed ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if s.done() != tt.done {
				t.Errorf("done = %v, want %v", s.done(), tt.done)
			}
			if c := s.closeCost(); c != tt.close {
				t.Errorf("close cost %d, want %d", c, tt.close)
			}
			if tt.done && !json.Valid([]byte(tt.text)) {
				t.Errorf("accepted as complete but not valid JSON")
			}
		})
	}
}

func TestJSONMaskClosing(t *testing.T) {
	tok := newFakeTok()
	texts := make([][]byte, tok.VocabSize())
	for i := range texts {
		texts[i] = []byte(tok.TokenText(int32(i)))
	}
	var s jsonState
	s.feed([]byte(`{"a":[1,{"b":"x`))
	mask := make([]uint64, (len(texts)+63)/64)
	if !jsonMask(&s, texts, s.closeCost()-1, mask) {
		t.Fatal("no closing token")
	}
	allowed := func(id int32) bool { return mask[id/64]&(1<<(uint(id)%64)) != 0 }
	if !allowed(tok.id(`"`)) || allowed(tok.id("a")) || allowed(tok.id("}")) {
		t.Errorf("closing mask inside a string should allow only the quote")
	}
	jsonMask(&s, texts, -1, mask)
	if !allowed(tok.id("a")) || !allowed(tok.id(`"`)) || allowed(tok.id("<eos>")) {
		t.Errorf("free mask inside a string")
	}
}

// TestJSONModeOutputParses: JSON mode always ends with an object that
// parses; one the token budget closed says "length" (the fake model's
// random text never closes an object by itself within 6 tokens), one the
// model closed with room to spare "stop".
func TestJSONModeOutputParses(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	reasons := map[int]map[string]int{}
	for seed := range uint64(12) {
		for _, maxTokens := range []int{6, 25, 80} {
			req := seeded("give me json", seed, maxTokens)
			req.Options.JSONMode = true
			o := complete(context.Background(), m, req)
			if o.err != nil {
				t.Fatalf("seed %d: %v", seed, o.err)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(o.text), &v); err != nil {
				t.Errorf("seed %d max %d: output %q does not parse: %v", seed, maxTokens, o.text, err)
			}
			if reasons[maxTokens] == nil {
				reasons[maxTokens] = map[string]int{}
			}
			reasons[maxTokens][o.reason]++
		}
	}
	for maxTokens, want := range map[int]map[string]bool{6: {"length": true}, 25: {"length": true, "stop": true}, 80: {"length": true, "stop": true}} {
		got := reasons[maxTokens]
		for r := range got {
			if !want[r] {
				t.Errorf("max %d: finish reasons %v, want only %v", maxTokens, got, want)
			}
		}
		if len(got) != len(want) {
			t.Errorf("max %d: finish reasons %v, want each of %v", maxTokens, got, want)
		}
	}
}

func TestJSONMaskBudgetCut(t *testing.T) {
	tok := newFakeTok()
	texts := make([][]byte, tok.VocabSize())
	for i := range texts {
		texts[i] = []byte(tok.TokenText(int32(i)))
	}
	var s jsonState
	s.feed([]byte(`{"a":[1,{"b":"x`))
	for _, tt := range []struct {
		maxCost int
		cut     bool
	}{
		{-1, false},               // no budget
		{1000, false},             // a budget no token reaches
		{s.closeCost(), true},     // only tokens that keep it closable
		{s.closeCost() - 1, true}, // must close now
	} {
		mask := make([]uint64, (len(texts)+63)/64)
		found, cut := jsonMaskBudget(&s, texts, tt.maxCost, mask)
		if !found || cut != tt.cut {
			t.Errorf("maxCost %d: found %v cut %v, want cut %v", tt.maxCost, found, cut, tt.cut)
		}
	}
}

// TestJSONModeLogprobsAreRaw checks that JSON mode reports logprobs of the
// raw distribution (executor.Work.Allowed changes the draw, not the
// numbers): the model's favourite token can never start a JSON object, yet
// it tops every top_logprobs list with its unconstrained probability.
func TestJSONModeLogprobsAreRaw(t *testing.T) {
	tok := newFakeTok()
	fav := tok.id("abc")
	vocab := tok.VocabSize()
	l := &fakeLoader{setup: func(f *fakeExec) {
		f.logits = func([]int32) []float32 {
			out := make([]float32, vocab)
			out[fav] = 10
			return out
		}
	}}
	m := newTestManager(t, l, nil)
	lse := math.Log(math.Exp(10) + float64(vocab-1))
	tests := []struct {
		name string
		json bool
	}{
		{"json mode", true},
		{"free", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := seeded("give me json", 3, 12)
			req.Options.JSONMode = tt.json
			req.Options.TopLogprobs = 2
			o := complete(context.Background(), m, req)
			if o.err != nil {
				t.Fatal(o.err)
			}
			var infos []TokenInfo
			for _, d := range o.deltas {
				infos = append(infos, d.Tokens...)
			}
			if len(infos) == 0 {
				t.Fatal("no tokens")
			}
			for i, ti := range infos {
				want := -lse
				if ti.ID == fav {
					want = 10 - lse
				}
				if math.Abs(float64(ti.Logprob)-want) > 1e-4 {
					t.Errorf("token %d (%q): logprob %g, want the raw %g", i, ti.Text, ti.Logprob, want)
				}
				if len(ti.Top) != 2 || ti.Top[0].Token != fav || math.Abs(float64(ti.Top[0].Logprob)-(10-lse)) > 1e-4 {
					t.Errorf("token %d: top %+v, want %d (%q) first with %g", i, ti.Top, fav, "abc", 10-lse)
				}
			}
			if tt.json {
				var v map[string]any
				if err := json.Unmarshal([]byte(o.text), &v); err != nil {
					t.Errorf("JSON mode output %q: %v", o.text, err)
				}
			}
		})
	}
}

func qwen3Texts(t testing.TB) [][]byte {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", "qwen3-tiny-Q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([][]byte, tk.VocabSize())
	for i := range texts {
		texts[i] = []byte(tk.Piece(int32(i), false))
	}
	return texts
}

// BenchmarkJSONMaskQwen3 times one JSON-mode mask over the Qwen3
// vocabulary: the scheduler computes one per JSON-mode sequence per step.
func BenchmarkJSONMaskQwen3(b *testing.B) {
	texts := qwen3Texts(b)
	var s jsonState
	s.feed([]byte(`{"name": "x`))
	mask := make([]uint64, (len(texts)+63)/64)
	for b.Loop() {
		jsonMask(&s, texts, -1, mask)
	}
}

// TestJSONMaskLargeVocab checks the mask over a real 152k-token vocabulary
// (split across workers) against a token-by-token check, in several states.
func TestJSONMaskLargeVocab(t *testing.T) {
	texts := qwen3Texts(t)
	tests := []struct {
		prefix  string
		maxCost int
	}{
		{``, -1},
		{`{"name": "x`, -1},
		{`{"name": "x`, 3},
		{`{"a": [1, 2`, -1},
		{`{"a": tr`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			var s jsonState
			if !s.feed([]byte(tt.prefix)) {
				t.Fatal("bad prefix")
			}
			mask := make([]uint64, (len(texts)+63)/64)
			found := jsonMask(&s, texts, tt.maxCost, mask)
			n := 0
			for id, text := range texts {
				var trial jsonState
				s.cloneInto(&trial)
				want := len(text) > 0 && trial.feed(text) && (tt.maxCost < 0 || trial.closeCost() <= tt.maxCost)
				if got := mask[id/64]&(1<<(uint(id)%64)) != 0; got != want {
					t.Fatalf("token %d %q: allowed %v, want %v", id, text, got, want)
				}
				if want {
					n++
				}
			}
			if found != (n > 0) || n == 0 {
				t.Errorf("found %v with %d allowed tokens", found, n)
			}
		})
	}
}
