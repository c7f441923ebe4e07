package tokenizer

import (
	"fmt"
)

// SentencePiece BPE as llama.cpp's llm_tokenizer_spm_session: start from
// UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is
// the highest-scoring token (ties: leftmost), then fall back to <0xNN> byte
// tokens for characters that are not tokens.

type spmSym struct {
	start, n   int32
	prev, next int32
}

type spmBigram struct {
	score       float32
	left, right int32
	size        int32
}

// spmLess orders the max-heap: higher score first, then smaller left.
func spmBefore(a, b spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

type spmState struct {
	syms []spmSym
	heap []spmBigram
}

func (s *spmState) push(b spmBigram) {
	s.heap = append(s.heap, b)
	h := s.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !spmBefore(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (s *spmState) pop() spmBigram {
	h := s.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && spmBefore(h[l], h[m]) {
			m = l
		}
		if r < len(h) && spmBefore(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	s.heap = h
	return top
}

func utf8Len(c byte) int32 {
	return [16]int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[c>>4]
}

func (t *Tokenizer) spmTryBigram(st *spmState, text string, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	l, r := st.syms[left], st.syms[right]
	id, ok := t.toID.lookup(text[l.start : r.start+r.n])
	if !ok {
		return
	}
	var score float32
	if t.scores != nil {
		score = t.scores[id]
	}
	st.push(spmBigram{score: score, left: left, right: right, size: l.n + r.n})
}

// encodeSPM tokenizes already-escaped text (spaces as ▁).
func (t *Tokenizer) encodeSPM(st *spmState, text string, out []int32) ([]int32, error) {
	st.syms, st.heap = st.syms[:0], st.heap[:0]
	for off := int32(0); int(off) < len(text); {
		n := min(utf8Len(text[off]), int32(len(text))-off)
		idx := int32(len(st.syms))
		next := idx + 1
		if int(off+n) == len(text) {
			next = -1
		}
		st.syms = append(st.syms, spmSym{start: off, n: n, prev: idx - 1, next: next})
		off += n
	}
	for i := 1; i < len(st.syms); i++ {
		t.spmTryBigram(st, text, int32(i-1), int32(i))
	}
	for len(st.heap) > 0 {
		b := st.pop()
		ls, rs := &st.syms[b.left], &st.syms[b.right]
		if ls.n == 0 || rs.n == 0 || ls.n+rs.n != b.size {
			continue
		}
		ls.n += rs.n
		rs.n = 0
		ls.next = rs.next
		if rs.next >= 0 {
			st.syms[rs.next].prev = b.left
		}
		t.spmTryBigram(st, text, ls.prev, b.left)
		t.spmTryBigram(st, text, b.left, ls.next)
	}
	if len(st.syms) == 0 {
		return out, nil
	}
	for i := int32(0); i != -1; i = st.syms[i].next {
		s := st.syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.toID.lookup(piece); ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			id := t.byteTok[piece[j]]
			if id == NoToken {
				return out, fmt.Errorf("%w: byte 0x%02X has no <0x%02X> token in this vocabulary", ErrUnknownToken, piece[j], piece[j])
			}
			out = append(out, id)
		}
	}
	return out, nil
}
