package tokenizer

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// wordCache remembers the tokens of recent pre-tokenized words. It is
// bounded: when full it is cleared.
type wordCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const wordCacheMax = 1 << 16

func newWordCache() *wordCache { return &wordCache{m: make(map[string][]int32)} }

func (c *wordCache) get(w string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[w]
	c.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(w string, ids []int32) {
	c.mu.Lock()
	if len(c.m) >= wordCacheMax {
		clear(c.m)
	}
	c.m[w] = ids
	c.mu.Unlock()
}

// bpeSym is one symbol of a word being merged (a doubly linked list).
type bpeSym struct {
	sym        int32
	prev, next int32
	start, end int32 // byte range in the word
	alive      bool
}

// bigram is a candidate merge of symbols left and left.next.
type bigram struct {
	rank        int32
	left, right int32
	lsym, rsym  int32
	result      int32 // the symbol lsym+rsym merge into
}

func bigramLess(a, b bigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// bigramHeap is a binary min-heap on (rank, left). spm.go has its twin
// for scores; a generic heap measured ~20% slower on BenchmarkMergeQwen3
// (method calls through a type parameter are not inlined), so both stay.
type bigramHeap []bigram

func (h *bigramHeap) push(b bigram) {
	*h = append(*h, b)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !bigramLess(s[i], s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *bigramHeap) pop() bigram {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && bigramLess(s[l], s[m]) {
			m = l
		}
		if r < len(s) && bigramLess(s[r], s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// scratch holds per-call buffers; pooled per tokenizer.
type scratch struct {
	split splitScratch
	syms  []bpeSym
	heap  bigramHeap
	spm   spmState
}

func (t *Tokenizer) getScratch() *scratch {
	if s, ok := t.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

func (t *Tokenizer) tryBigram(sc *scratch, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	l, r := sc.syms[left].sym, sc.syms[right].sym
	m, ok := t.merges.get(pairKey(l, r))
	if !ok {
		return
	}
	sc.heap.push(bigram{rank: m.rank, left: left, right: right, lsym: l, rsym: r, result: m.result})
}

// mergeWord runs BPE over the initial symbols in sc.syms and appends the
// token ids of the final symbols to out.
func (t *Tokenizer) mergeWord(sc *scratch, word string, out []int32) []int32 {
	syms := sc.syms
	for i := range syms {
		syms[i].prev, syms[i].next, syms[i].alive = int32(i-1), int32(i+1), true
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	sc.heap = sc.heap[:0]
	for i := 1; i < len(syms); i++ {
		t.tryBigram(sc, int32(i-1), int32(i))
	}
	for len(sc.heap) > 0 {
		b := sc.heap.pop()
		ls, rs := &syms[b.left], &syms[b.right]
		if !ls.alive || !rs.alive || ls.sym != b.lsym || rs.sym != b.rsym || ls.next != b.right {
			continue
		}
		ls.sym = b.result
		ls.end = rs.end
		rs.alive = false
		ls.next = rs.next
		if rs.next >= 0 {
			syms[rs.next].prev = b.left
		}
		t.tryBigram(sc, ls.prev, b.left)
		t.tryBigram(sc, b.left, ls.next)
	}
	for i := int32(0); i >= 0 && int(i) < len(syms); i = syms[i].next {
		s := syms[i]
		if int(s.sym) < t.text.len() {
			out = append(out, s.sym)
			continue
		}
		out = t.emitBytes(word[s.start:s.end], out)
	}
	return out
}

// emitBytes handles a final symbol that is not a token: byte fallback for
// raw BPE; for byte-level BPE llama.cpp looks each byte of the symbol's
// byte-level text up as a token and drops the misses.
func (t *Tokenizer) emitBytes(raw string, out []int32) []int32 {
	if t.kind == KindBPERaw {
		for i := 0; i < len(raw); i++ {
			if id := t.byteTok[raw[i]]; id != NoToken {
				out = append(out, id)
			}
		}
		return out
	}
	txt := t.bl.encode(raw)
	for i := 0; i < len(txt); i++ {
		if id, ok := t.toID.lookup(txt[i : i+1]); ok {
			out = append(out, id)
		}
	}
	return out
}

// maxCachedWord is the longest word (bytes) the word cache keeps: longer
// ones are rare and would let one text fill the cache's memory.
const maxCachedWord = 256

// encodeWord tokenizes one pre-tokenized word (raw bytes) with the cache.
// The cache keeps a copy of the word, never a slice of the caller's text,
// so a cached word does not pin a whole prompt in memory.
func (t *Tokenizer) encodeWord(sc *scratch, word string, out []int32) []int32 {
	if len(word) > maxCachedWord {
		return t.encodeWordUncached(sc, word, out)
	}
	if ids, ok := t.cache.get(word); ok {
		return append(out, ids...)
	}
	start := len(out)
	out = t.encodeWordUncached(sc, word, out)
	t.cache.put(strings.Clone(word), append([]int32(nil), out[start:]...))
	return out
}

func (t *Tokenizer) encodeWordUncached(sc *scratch, word string, out []int32) []int32 {
	sc.syms = sc.syms[:0]
	switch t.kind {
	case KindBPE:
		if t.ignoreMerges {
			if id, ok := t.toID.lookup(t.bl.encode(word)); ok {
				return append(out, id)
			}
		}
		for i := 0; i < len(word); i++ {
			sc.syms = append(sc.syms, bpeSym{sym: t.byteSym[word[i]], start: int32(i), end: int32(i + 1)})
		}
	case KindBPERaw:
		if t.ignoreMerges {
			if id, ok := t.toID.lookup(word); ok {
				return append(out, id)
			}
		}
		for i := 0; i < len(word); {
			_, n := utf8.DecodeRuneInString(word[i:])
			sc.syms = append(sc.syms, bpeSym{sym: t.symbol2(word[i : i+n]), start: int32(i), end: int32(i + n)})
			i += n
		}
	}
	return t.mergeWord(sc, word, out)
}

// symbol2 is symbol without registering new extras (safe for concurrent
// encoding): unknown characters get a transient id past all extras.
func (t *Tokenizer) symbol2(s string) int32 {
	if id, ok := t.toID.lookup(s); ok {
		return id
	}
	if id, ok := t.extraID[s]; ok {
		return id
	}
	return int32(t.text.len() + len(t.extra)) // never in merges; emitted as bytes
}
