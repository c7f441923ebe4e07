package runner

import (
	"context"
	"encoding/json"
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
