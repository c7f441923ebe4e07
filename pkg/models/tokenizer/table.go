package tokenizer

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
)

// The two lookup tables every tokenizer builds at load time are open
// addressing hash tables over flat, pointer-free slices: one allocation each,
// nothing for the garbage collector to scan, and no per-entry strings. For a
// 150k-token vocabulary they are several times cheaper to build than Go
// maps keyed by token text or by merge pairs.

// tableSize returns the power-of-two slot count for n entries at a load
// factor of at most 0.6.
func tableSize(n int) int {
	want := max(n+n*2/3, 16)
	return 1 << bits.Len(uint(want-1))
}

// vocabText holds the text of every token back to back in one string: three
// allocations for the whole vocabulary instead of one per token, nothing for
// the garbage collector to follow, and contiguous memory for the index's
// comparisons.
type vocabText struct {
	blob string
	off  []uint32 // len+1 offsets into blob
}

func newVocabText(tokens []string) (vocabText, error) {
	total := 0
	for _, w := range tokens {
		total += len(w)
	}
	if total > math.MaxUint32 {
		return vocabText{}, fmt.Errorf("%w: token texts total %d bytes (at most 4 GiB)", ErrInvalidVocab, total)
	}
	var b strings.Builder
	b.Grow(total)
	off := make([]uint32, len(tokens)+1)
	for i, w := range tokens {
		b.WriteString(w)
		off[i+1] = uint32(b.Len())
	}
	return vocabText{blob: b.String(), off: off}, nil
}

// at is the text of token id (0 <= id < len).
func (v *vocabText) at(id int32) string { return v.blob[v.off[id]:v.off[id+1]] }

func (v *vocabText) len() int { return len(v.off) - 1 }

// tokenIndex maps token text to token id. A slot holds the upper 32 bits of
// the text's hash (a tag that avoids most string comparisons) and id+1; a
// zero slot is empty. Texts are compared against the vocabulary itself, so
// the index stores no strings.
type tokenIndex struct {
	seed  maphash.Seed
	text  *vocabText
	slots []uint64
	mask  uint64
}

func newTokenIndex(text *vocabText) *tokenIndex {
	n := tableSize(text.len())
	return &tokenIndex{seed: maphash.MakeSeed(), text: text, slots: make([]uint64, n), mask: uint64(n - 1)}
}

// insert adds tokens[id]; when the text is already present it returns the
// earlier id and false.
func (x *tokenIndex) insert(id int32) (int32, bool) {
	s := x.text.at(id)
	h := maphash.String(x.seed, s)
	tag := h >> 32
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		e := x.slots[i]
		if e == 0 {
			x.slots[i] = tag<<32 | uint64(uint32(id)+1)
			return id, true
		}
		if e>>32 == tag {
			if old := int32(uint32(e) - 1); x.text.at(old) == s {
				return old, false
			}
		}
	}
}

// lookup returns the id whose text is s.
func (x *tokenIndex) lookup(s string) (int32, bool) {
	h := maphash.String(x.seed, s)
	tag := h >> 32
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		e := x.slots[i]
		if e == 0 {
			return NoToken, false
		}
		if e>>32 == tag {
			if id := int32(uint32(e) - 1); x.text.at(id) == s {
				return id, true
			}
		}
	}
}

// mergeSlot is one entry of a mergeTable; rank1 == 0 marks an empty slot.
type mergeSlot struct {
	key    uint64 // left symbol << 32 | right symbol
	rank1  int32  // merge rank + 1
	result int32  // symbol the pair merges into
}

// mergeTable maps a pair of BPE symbols to its merge (rank and result).
type mergeTable struct {
	slots []mergeSlot
	shift uint
}

func newMergeTable(n int) mergeTable {
	size := tableSize(n)
	return mergeTable{slots: make([]mergeSlot, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
}

func pairKey(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// home is the first slot probed for key (Fibonacci hashing).
func (m *mergeTable) home(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> m.shift }

// add records a merge; a pair already present keeps its first (lowest)
// rank and add reports false.
func (m *mergeTable) add(key uint64, rank, result int32) bool {
	mask := uint64(len(m.slots) - 1)
	for i := m.home(key); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.rank1 == 0 {
			*s = mergeSlot{key: key, rank1: rank + 1, result: result}
			return true
		}
		if s.key == key {
			return false
		}
	}
}

// get returns the merge of a pair.
func (m *mergeTable) get(key uint64) (merge, bool) {
	if len(m.slots) == 0 {
		return merge{}, false
	}
	mask := uint64(len(m.slots) - 1)
	for i := m.home(key); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.rank1 == 0 {
			return merge{}, false
		}
		if s.key == key {
			return merge{rank: s.rank1 - 1, result: s.result}, true
		}
	}
}
