package engine

import (
	"context"
	"strings"
	"testing"
)

// script makes the toy model emit fixed tokens after the prompt.
func script(promptLen int, tokens []int32, vocab int) func([]int32) []float32 {
	return func(prefix []int32) []float32 {
		out := make([]float32, vocab)
		i := len(prefix) - promptLen
		next := int32(1) // <eos>
		if i < len(tokens) {
			next = tokens[i]
		}
		out[next] = 10
		return out
	}
}

func TestStopStringsAcrossTokens(t *testing.T) {
	tok := newFakeTok()
	ids := func(ss ...string) []int32 {
		var out []int32
		for _, s := range ss {
			out = append(out, tok.id(s))
		}
		return out
	}
	prompt := "p"
	tests := []struct {
		name    string
		gen     []int32
		stop    []string
		text    string
		reason  string
		matched string // Result.StopSequence
	}{
		{"split stop", ids("abc", "ST", "OP", "x"), []string{"STOP"}, "abc", "stop", "STOP"},
		{"stop inside a token", ids("h", "abc", "x"), []string{"b"}, "ha", "stop", "b"},
		{"earliest of two stops", ids("h", "abc", "x"), []string{"c", "b"}, "ha", "stop", "b"},
		{"partial stop released", ids("abc", "ST", "x", "<eos>"), []string{"STOP"}, "abcSTx", "stop", ""},
		{"partial stop at the end", ids("abc", "ST"), []string{"STOP"}, "abcST", "length", ""},
		{"no stops", ids("abc", "<eos>"), nil, "abc", "stop", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &fakeLoader{setup: func(f *fakeExec) { f.logits = script(2, tt.gen, tok.VocabSize()) }}
			m := newTestManager(t, l, nil)
			req := seeded(prompt, 1, 0)
			req.Options.Stop = tt.stop
			if tt.reason == "length" {
				req.Options.MaxTokens = len(tt.gen)
			}
			o := complete(context.Background(), m, req)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.text != tt.text || o.reason != tt.reason || o.res.StopSequence != tt.matched {
				t.Errorf("got %q (%s, stop sequence %q), want %q (%s, %q)", o.text, o.reason, o.res.StopSequence, tt.text, tt.reason, tt.matched)
			}
			for _, d := range o.deltas {
				for _, s := range tt.stop {
					if strings.Contains(d.Content, s) {
						t.Errorf("delta %q contains stop %q", d.Content, s)
					}
				}
			}
		})
	}
}

func TestReasoningAndLogprobs(t *testing.T) {
	tok := newFakeTok()
	gen := []int32{tok.id("<think>"), tok.id("abc"), tok.id("</think>"), tok.id("hello")}
	l := &fakeLoader{setup: func(f *fakeExec) { f.logits = script(2, gen, tok.VocabSize()) }}
	m := newTestManager(t, l, nil)
	req := seeded("p", 1, 0)
	req.Options.TopLogprobs = 3
	var reasoning, content string
	var infos []TokenInfo
	res, err := m.Complete(context.Background(), req, func(d Delta) error {
		reasoning += d.Reasoning
		content += d.Content
		infos = append(infos, d.Tokens...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if reasoning != "abc" || content != "hello" {
		t.Errorf("reasoning %q content %q", reasoning, content)
	}
	if res.Usage.CompletionTokens != 4 || len(infos) != 4 {
		t.Fatalf("usage %+v, %d token infos", res.Usage, len(infos))
	}
	for _, ti := range infos {
		if len(ti.Top) != 3 || ti.Top[0].Token != ti.ID || ti.Logprob > 0 || ti.TopText[0] != ti.Text {
			t.Errorf("token info %+v", ti)
		}
	}
}

func TestChat(t *testing.T) {
	m := newTestManager(t, &fakeLoader{}, nil)
	msgs := []byte(`[{"role":"user","content":"hello"}]`)
	req := ChatRequest{Model: "toy", Messages: msgs, Options: Options{MaxTokens: 5}}
	var n int
	res, err := m.Chat(context.Background(), req, func(d Delta) error { n += len(d.Tokens); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want, _ := newFakeTok().Encode("user: hello\nassistant:", false, true)
	if res.Usage.PromptTokens != len(want) || res.Usage.CompletionTokens != n {
		t.Errorf("usage %+v, want %d prompt tokens and %d completion tokens", res.Usage, len(want), n)
	}
	_, err = m.Chat(context.Background(), ChatRequest{Model: "toy", Messages: []byte(`{`)}, nil)
	if kindOf(err) != KindBadRequest {
		t.Errorf("bad messages: %v", err)
	}
}
