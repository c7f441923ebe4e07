package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// spellOut is the fake model of these tests: after the last ':' of its
// context (the "assistant:" of the prompt) it spells answer one character
// a token, which the fake tokenizer would spell with fewer tokens
// ("hello", " world"): re-tokenizing the answer's text does not give back
// the ids it generated.
func spellOut(answer string, tok *fakeTok) func([]int32) []float32 {
	colon := tok.id(":")
	return func(prefix []int32) []float32 {
		k := 0
		for i := len(prefix) - 1; i >= 0; i-- {
			if prefix[i] == colon {
				k = len(prefix) - 1 - i
				break
			}
		}
		out := make([]float32, tok.VocabSize())
		out[tok.id(answer[k%len(answer):k%len(answer)+1])] = 10
		return out
	}
}

// turnTemplate renders "role:content\n" lines and ends with "assistant:",
// so a turn's prompt and answer are a prefix of the next turn's prompt.
type turnTemplate struct{}

func (turnTemplate) Render(_ context.Context, in ChatInput) (string, error) {
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal(in.Messages, &msgs); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + ":" + m.Content + "\n")
	}
	if in.AddGenerationPrompt {
		b.WriteString("assistant:")
	}
	return b.String(), nil
}

// turnLoader is a fakeLoader whose models render with turnTemplate.
type turnLoader struct{ *fakeLoader }

func (l turnLoader) Load(ctx context.Context, name string, opts LoadOptions) (*Model, error) {
	m, err := l.fakeLoader.Load(ctx, name, opts)
	if m != nil {
		m.Template = turnTemplate{}
	}
	return m, err
}

// chatMessages encodes role/content pairs as a messages array.
func chatMessages(t *testing.T, pairs ...string) json.RawMessage {
	t.Helper()
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var ms []msg
	for i := 0; i+1 < len(pairs); i += 2 {
		ms = append(ms, msg{pairs[i], pairs[i+1]})
	}
	b, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTurnManager(t *testing.T, l *fakeLoader, mod func(*Config)) *Manager {
	t.Helper()
	cfg := DefaultConfig()
	cfg.KeepAlive = -1
	mod(&cfg)
	m := NewManager(cfg, turnLoader{l}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// seqPrompt is the prompt the fake executor was fed for its last sequence:
// the cached history of its first work, then the tokens of its works.
func seqPrompt(ex *fakeExec, n int) []int32 {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	last := ex.works[len(ex.works)-1].Seq
	var out []int32
	for _, w := range ex.works {
		if w.Seq != last {
			continue
		}
		if len(out) == 0 {
			out = append(out, w.History...)
		}
		out = append(out, w.Tokens...)
	}
	return out[:min(n, len(out))]
}

// stepRig paces a fake executor: every step waits for a value on gate;
// step number stopAt closes inStep when it starts and goes on once stopped
// is closed.
type stepRig struct {
	gate            chan struct{}
	inStep, stopped chan struct{}
	stopAt          int
}

func newStepRig(stopAt int) *stepRig {
	return &stepRig{gate: make(chan struct{}, 64), inStep: make(chan struct{}), stopped: make(chan struct{}), stopAt: stopAt}
}

// attach makes ex wait on the rig.
func (r *stepRig) attach(ex *fakeExec) {
	ex.gate = r.gate
	ex.failStep = func(step int) error {
		if step == r.stopAt {
			close(r.inStep)
			<-r.stopped
		}
		return nil
	}
}

// interruptedTurn runs a first turn that the caller stops, as Ctrl+C in a
// chat does, while the step sampling the rig's stopAt-th token runs: one
// token a step (the prefill samples the first), so stopAt-1 deltas have
// been delivered and the last token's delta comes after the cancellation.
// It returns the answer's text as a chat records it (the deltas and
// Result.Undelivered) and the ids of its prompt and answer.
func interruptedTurn(t *testing.T, m *Manager, l *fakeLoader, rig *stepRig, question string) (answer string, ids []int32) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var text strings.Builder
	var gen []int32
	n := 0
	rig.gate <- struct{}{} // the prefill step, which samples the first token
	res, err := m.Chat(ctx, ChatRequest{Model: "toy", Messages: chatMessages(t, "user", question),
		Options: Options{MaxTokens: 40}}, func(d Delta) error {
		text.WriteString(d.Content)
		for _, tk := range d.Tokens {
			gen = append(gen, tk.ID)
		}
		rig.gate <- struct{}{} // the next step
		if n++; n == rig.stopAt-1 {
			<-rig.inStep
			cancel()
			close(rig.stopped)
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || res.FinishReason != "cancelled" {
		t.Fatalf("first turn: %q, %v; want cancelled", res.FinishReason, err)
	}
	text.WriteString(res.Undelivered.Content)
	for _, tk := range res.Undelivered.Tokens {
		gen = append(gen, tk.ID)
	}
	if len(gen) != rig.stopAt || res.Usage.CompletionTokens != rig.stopAt || len(res.Undelivered.Tokens) != 1 {
		t.Fatalf("first turn: %d ids came back (%d undelivered), usage says %d generated; want %d (1 undelivered)",
			len(gen), len(res.Undelivered.Tokens), res.Usage.CompletionTokens, rig.stopAt)
	}
	prompt := seqPrompt(l.last(), res.Usage.PromptTokens)
	return text.String(), append(prompt, gen...)
}

// TestChatReusesInterruptedTurn: the second turn of a chat whose first
// answer was interrupted (and whose ids are not the tokenizer's spelling
// of their text) is prefilled from the prefix cache for every position the
// first turn computed. That is the first turn's prompt and answer but its
// last token, which was sampled and never fed back (its KV was never
// computed), rounded down to a whole block: the prefix cache shares full
// blocks only.
func TestChatReusesInterruptedTurn(t *testing.T) {
	for _, bs := range []int{1, 4} {
		t.Run(fmt.Sprintf("block%d", bs), func(t *testing.T) {
			tok := newFakeTok()
			rig := newStepRig(10)
			l := &fakeLoader{bs: bs, setup: func(ex *fakeExec) {
				ex.logits = spellOut("hello world hello", tok)
				rig.attach(ex)
			}}
			m := newTurnManager(t, l, func(c *Config) { c.ChunkSize = 512; c.NumCtx = 256 })
			answer, first := interruptedTurn(t, m, l, rig, "say hi")
			close(rig.gate) // the second turn runs freely

			msgs := chatMessages(t, "user", "say hi", "assistant", answer, "user", "again")
			res, err := m.Chat(context.Background(), ChatRequest{Model: "toy", Messages: msgs,
				Options: Options{MaxTokens: 2}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := turnTemplate{}.Render(context.Background(), ChatInput{Messages: msgs, AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := tok.Encode(rendered, false, true)
			if len(plain) >= len(first) && slices.Equal(plain[:len(first)], first) {
				t.Fatalf("the fake tokenizer spells the first turn's text with its own ids; the test proves nothing")
			}
			prompt := seqPrompt(l.last(), res.Usage.PromptTokens)
			if !slices.Equal(prompt[:len(first)], first) {
				t.Errorf("second prompt starts %v\nwant the first turn's ids %v", prompt[:len(first)], first)
			}
			if got, _ := spell(tok, prompt); got != rendered {
				t.Errorf("second prompt spells %q\nwant %q", got, rendered)
			}
			if want := (len(first) - 1) / bs * bs; res.Usage.CachedTokens != want {
				t.Errorf("cached %d of %d prompt tokens; want %d (the first turn's %d ids but its last, in whole blocks of %d)",
					res.Usage.CachedTokens, res.Usage.PromptTokens, want, len(first), bs)
			}
		})
	}
}

// TestChatSpliceFallsBack: when the history renders differently from what
// was generated, only the text the two share is reused, and the prompt
// still spells exactly the rendered text.
func TestChatSpliceFallsBack(t *testing.T) {
	tok := newFakeTok()
	rig := newStepRig(7)
	l := &fakeLoader{bs: 1, setup: func(ex *fakeExec) {
		ex.logits = spellOut("hello world", tok)
		rig.attach(ex)
	}}
	m := newTurnManager(t, l, func(c *Config) { c.ChunkSize = 512; c.NumCtx = 256 })
	answer, first := interruptedTurn(t, m, l, rig, "say hi")
	close(rig.gate)
	edited := strings.Replace(answer, "hello", "help", 1)
	msgs := chatMessages(t, "user", "say hi", "assistant", edited, "user", "again")
	res, err := m.Chat(context.Background(), ChatRequest{Model: "toy", Messages: msgs, Options: Options{MaxTokens: 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rendered, _ := turnTemplate{}.Render(context.Background(), ChatInput{Messages: msgs, AddGenerationPrompt: true})
	prompt := seqPrompt(l.last(), res.Usage.PromptTokens)
	if got, _ := spell(tok, prompt); got != rendered {
		t.Errorf("second prompt spells %q\nwant %q", got, rendered)
	}
	shared := strings.Index(rendered, "help") + len("hel")
	if got, _ := spell(tok, prompt[:res.Usage.CachedTokens]); len(got) > shared {
		t.Errorf("cached %d tokens spelling %q, past the shared text %q", res.Usage.CachedTokens, got, rendered[:shared])
	}
	if res.Usage.CachedTokens < len(first)-len(answer)+1 {
		t.Errorf("cached %d tokens; want at least the first prompt and the answer's shared start", res.Usage.CachedTokens)
	}
}

// pieceTok is fakeTok that spells its control tokens in prompt text.
type pieceTok struct{ *fakeTok }

func (p pieceTok) Piece(id int32) string { return p.vocab[id] }

// TestSameText: a spliced prompt is used only when it spells the same text
// with the same control tokens as the whole text tokenized at once.
func TestSameText(t *testing.T) {
	tok := pieceTok{newFakeTok()}
	enc := func(s string) []int32 {
		ids, err := tok.Encode(s, false, true)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	chars := func(s string) []int32 {
		var ids []int32
		for i := range len(s) {
			ids = append(ids, tok.id(s[i:i+1]))
		}
		return ids
	}
	whole := enc("a:hello<eos>\nb:")
	for _, tc := range []struct {
		name string
		ids  []int32
		want bool
	}{
		{"the same ids", whole, true},
		{"other ids, same text", slices.Concat(enc("a:"), chars("hello"), enc("<eos>\nb:")), true},
		{"a space prefix added to the rest", slices.Concat(enc("a:hello"), enc(" <eos>\nb:")), false},
		{"a control token spelled as text", slices.Concat(enc("a:hello"), chars("<eos>"), enc("\nb:")), false},
		{"text missing", enc("a:hello\nb:"), false},
	} {
		if got := sameText(tok, tc.ids, whole); got != tc.want {
			t.Errorf("%s: sameText = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTurnStoreBounds: a turn replaces the turns it continues, the store
// keeps at most max turns (least recently used out), and a match ends at a
// cut on a character boundary.
func TestTurnStoreBounds(t *testing.T) {
	mk := func(text string, ids ...int32) *turn {
		return &turn{ids: ids, text: text, cuts: []cut{{len(text), len(ids)}}}
	}
	s := &turnStore{max: 2}
	s.add(mk("ab", 1))
	s.add(mk("abcd", 1, 2)) // continues "ab"
	if len(s.turns) != 1 || s.turns[0].text != "abcd" {
		t.Fatalf("after a continuation: %d turns, first %q; want only \"abcd\"", len(s.turns), s.turns[0].text)
	}
	s.add(mk("xy", 3))
	if got, _ := s.longest("abcd!"); got == nil || got.text != "abcd" { // now most recently used
		t.Fatalf("longest(abcd!) = %v", got)
	}
	s.add(mk("pq", 4)) // evicts "xy", the least recently used
	var texts []string
	for _, tu := range s.turns {
		texts = append(texts, tu.text)
	}
	if !slices.Equal(texts, []string{"abcd", "pq"}) {
		t.Errorf("turns %q, want [abcd pq]", texts)
	}
	// "é" is two bytes: a cut between them is no place to start the rest.
	u := &turn{ids: []int32{1, 2, 3}, text: "aé", cuts: []cut{{1, 1}, {2, 2}, {3, 3}}}
	if c := u.cutAt(2, "aéz"); c != (cut{1, 1}) {
		t.Errorf("cutAt inside a character = %+v, want {1 1}", c)
	}
	if c := u.cutAt(3, "aéz"); c != (cut{3, 3}) {
		t.Errorf("cutAt after the character = %+v, want {3 3}", c)
	}
}
