package engine

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// turnStore remembers, for one loaded model, the token ids of its recent
// chat turns (the prompt and the tokens generated after it) with the text
// they stand for, so that the next turn of a conversation reuses the ids
// the model actually read and sampled instead of tokenizing their text
// again. Re-tokenizing is not enough: a sampled sequence is often not the
// tokenizer's own spelling of its text, and an interrupted answer ends
// wherever it was stopped, so the new prompt's ids would part from the
// cached ones early and the prefix cache would miss the rest.
//
// The store is matched on text, never on ids a client sent: a turn's ids
// are reused only for a prefix of the new prompt's text that equals the
// text they stand for, so a client can only reuse ids for text it sent
// itself. It holds at most max turns, least recently used first out.
type turnStore struct {
	mu    sync.Mutex
	max   int
	turns []*turn // least recently used first
}

// turn is one finished chat turn. ids stand for text; cuts are where a
// later prompt may stop reusing them (after each piece of prompt text
// tokenized at once, and after each generated token), ascending.
type turn struct {
	ids  []int32
	text string
	cuts []cut
}

// cut is a place in a turn: text bytes and ids before it.
type cut struct{ text, ids int }

// minTurns is the least number of turns a model's store keeps.
const minTurns = 8

func newTurnStore(numParallel int) *turnStore {
	return &turnStore{max: max(minTurns, 2*numParallel)}
}

// pieceTokenizer is implemented by tokenizers that give the exact text a
// token stands for inside prompt text, control tokens included (their
// literal text, "<|im_end|>"); TokenText gives control tokens no text.
type pieceTokenizer interface {
	Piece(id int32) string
}

// piece is the text id stands for in prompt text ("" when unknown).
func piece(tok Tokenizer, id int32) string {
	if pt, ok := tok.(pieceTokenizer); ok {
		return pt.Piece(id)
	}
	return tok.TokenText(id)
}

// longest finds the stored turn sharing the longest prefix with text and
// the last cut within that prefix that falls on a character boundary of
// text. It returns nil when no turn shares a cut.
func (s *turnStore) longest(text string) (*turn, cut) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *turn
	var bc cut
	for _, t := range s.turns {
		n := commonPrefix(t.text, text)
		if n <= bc.text {
			continue
		}
		if c := t.cutAt(n, text); c.ids > 0 && c.text > bc.text {
			best, bc = t, c
		}
	}
	if best != nil { // most recently used last
		i := slices.Index(s.turns, best)
		s.turns = append(slices.Delete(s.turns, i, i+1), best)
	}
	return best, bc
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cutAt is t's last cut at or before byte n that falls on a character
// boundary of text (the rest is then valid text to tokenize).
func (t *turn) cutAt(n int, text string) cut {
	i := sort.Search(len(t.cuts), func(i int) bool { return t.cuts[i].text > n }) - 1
	for ; i >= 0; i-- {
		c := t.cuts[i]
		if c.text == len(text) || utf8.RuneStart(text[c.text]) {
			return c
		}
	}
	return cut{}
}

// add stores t, dropping the turns it continues (their ids and text are
// a prefix of its own) and then the least recently used beyond max.
func (s *turnStore) add(t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = slices.DeleteFunc(s.turns, func(o *turn) bool {
		return len(o.ids) <= len(t.ids) && strings.HasPrefix(t.text, o.text) && slices.Equal(o.ids, t.ids[:len(o.ids)])
	})
	s.turns = append(s.turns, t)
	if extra := len(s.turns) - s.max; extra > 0 {
		s.turns = slices.Delete(s.turns, 0, extra)
	}
}

// promptTurn is a chat prompt's ids with the text and cuts they carry
// over from an earlier turn.
type promptTurn struct {
	turn
	reused int // ids taken from an earlier turn
}

// chatPrompt tokenizes a rendered chat prompt. When a stored turn of the
// model shares a prefix with text, its ids are reused for that prefix and
// only the rest is tokenized; the result must then stand for exactly the
// same text, with the same control tokens, as the whole text tokenized at
// once, else the whole text's ids are used (a tokenizer that adds a space
// prefix to every text it starts, a template that re-renders history, a
// cut inside a control token's text), as they are when the splice has too
// many ids for the context and the whole text's would fit better.
func chatPrompt(ctx context.Context, e *entry, text string) (promptTurn, error) {
	whole, err := encode(ctx, e, text, false)
	if err != nil {
		return promptTurn{}, err
	}
	plain := promptTurn{turn: turn{ids: whole, text: text, cuts: []cut{{len(text), len(whole)}}}}
	base, c := e.sched.turns.longest(text)
	if base == nil {
		return plain, nil
	}
	ids := slices.Clone(base.ids[:c.ids])
	if c.text < len(text) {
		rest, err := encode(ctx, e, text[c.text:], false)
		if err != nil { // the whole text tokenized: only the reuse is lost
			return plain, nil
		}
		ids = append(ids, rest...)
	}
	if !sameText(e.model.Tokenizer, ids, whole) || len(ids) > len(whole) && len(ids) >= e.sched.info.NCtx {
		return plain, nil // (the whole text's fewer ids may still fit the context)
	}
	i := sort.Search(len(base.cuts), func(i int) bool { return base.cuts[i].text > c.text })
	cuts := append(slices.Clone(base.cuts[:i]), cut{len(text), len(ids)})
	return promptTurn{turn: turn{ids: ids, text: text, cuts: cuts}, reused: c.ids}, nil
}

// sameText reports whether two tokenizations stand for the same text with
// the same control tokens in the same order.
func sameText(tok Tokenizer, a, b []int32) bool {
	ta, ca := spell(tok, a)
	tb, cb := spell(tok, b)
	return ta == tb && slices.Equal(ca, cb)
}

// spell returns the text ids stand for and their control tokens (those
// with prompt text but no output text) in order.
func spell(tok Tokenizer, ids []int32) (string, []int32) {
	var b strings.Builder
	var controls []int32
	for _, id := range ids {
		p := piece(tok, id)
		b.WriteString(p)
		if p != "" && tok.TokenText(id) == "" {
			controls = append(controls, id)
		}
	}
	return b.String(), controls
}

// extend returns the turn of a prompt followed by the tokens generated
// after it: a cut after each generated token, up to the first whose text
// is unknown.
func (p promptTurn) extend(tok Tokenizer, generated []int32) *turn {
	t := &turn{ids: slices.Clone(p.ids), cuts: slices.Clone(p.cuts)}
	var b strings.Builder
	b.WriteString(p.text)
	for _, id := range generated {
		s := piece(tok, id)
		if s == "" {
			break
		}
		b.WriteString(s)
		t.ids = append(t.ids, id)
		t.cuts = append(t.cuts, cut{b.Len(), len(t.ids)})
	}
	t.text = b.String()
	return t
}
