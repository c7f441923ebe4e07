package runner

import (
	"context"
	"encoding/json"
	"math"
	"testing"
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

func TestJSONModeOutputParses(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
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
			if o.reason != "stop" {
				t.Errorf("seed %d max %d: finish %q, want stop", seed, maxTokens, o.reason)
			}
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
