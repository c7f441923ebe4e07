package tokenizer

import (
	"fmt"
	"sync"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

func mustVocabText(t *testing.T, tokens []string) *vocabText {
	t.Helper()
	v, err := newVocabText(tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range tokens {
		if v.at(int32(i)) != w {
			t.Fatalf("vocabText.at(%d) = %q, want %q", i, v.at(int32(i)), w)
		}
	}
	if v.len() != len(tokens) {
		t.Fatalf("vocabText.len() = %d, want %d", v.len(), len(tokens))
	}
	return &v
}

func TestTokenIndex(t *testing.T) {
	tokens := []string{"a", "b", "ab", "", "long token text", "b"}
	x := newTokenIndex(mustVocabText(t, tokens))
	for i := range tokens[:5] {
		if id, ok := x.insert(int32(i)); !ok || id != int32(i) {
			t.Fatalf("insert(%d) = %d, %v", i, id, ok)
		}
	}
	if old, ok := x.insert(5); ok || old != 1 {
		t.Errorf("duplicate insert = %d, %v; want 1, false", old, ok)
	}
	tests := []struct {
		text string
		id   int32
		ok   bool
	}{{"a", 0, true}, {"ab", 2, true}, {"", 3, true}, {"long token text", 4, true}, {"abc", NoToken, false}, {"A", NoToken, false}}
	for _, tc := range tests {
		if id, ok := x.lookup(tc.text); id != tc.id || ok != tc.ok {
			t.Errorf("lookup(%q) = %d, %v; want %d, %v", tc.text, id, ok, tc.id, tc.ok)
		}
	}
}

func TestTokenIndexMany(t *testing.T) {
	const n = 50000
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d", i)
	}
	x := newTokenIndex(mustVocabText(t, tokens))
	for i := range tokens {
		if _, ok := x.insert(int32(i)); !ok {
			t.Fatalf("insert %d reported a duplicate", i)
		}
	}
	for i, s := range tokens {
		if id, ok := x.lookup(s); !ok || id != int32(i) {
			t.Fatalf("lookup(%q) = %d, %v", s, id, ok)
		}
		if _, ok := x.lookup(s + "x"); ok && i < n/10 {
			t.Fatalf("lookup(%q) found a missing text", s+"x")
		}
	}
}

func TestMergeTable(t *testing.T) {
	m := newMergeTable(3000)
	for i := range int32(3000) {
		if !m.add(pairKey(i, i*7), i, i+1000) {
			t.Fatalf("add %d reported a duplicate", i)
		}
	}
	if m.add(pairKey(5, 35), 9999, 1) {
		t.Error("a repeated pair was added again")
	}
	for i := range int32(3000) {
		mg, ok := m.get(pairKey(i, i*7))
		if !ok || mg.rank != i || mg.result != i+1000 {
			t.Fatalf("get(%d) = %+v, %v", i, mg, ok)
		}
		if _, ok := m.get(pairKey(i*7+1, i)); ok {
			t.Fatalf("get of a missing pair (%d, %d) succeeded", i*7+1, i)
		}
	}
	// (0, 0) is a valid pair, and the zero table finds nothing.
	m2 := newMergeTable(1)
	m2.add(pairKey(0, 0), 0, 7)
	if mg, ok := m2.get(pairKey(0, 0)); !ok || mg.result != 7 {
		t.Errorf("pair (0,0): %+v %v", mg, ok)
	}
	var zero mergeTable
	if _, ok := zero.get(pairKey(1, 2)); ok {
		t.Error("zero mergeTable found a pair")
	}
}

// TestDuplicateTokenRejected: a vocabulary with the same text twice is an
// error naming both ids.
func TestDuplicateTokenRejected(t *testing.T) {
	_, err := build(&spec{kind: KindBPERaw, tokens: []string{"a", "b", "a"}})
	if err == nil || err.Error() != `tokenizer: invalid vocabulary: duplicate token "a" has ids 0 and 2` {
		t.Errorf("err = %v", err)
	}
}

// TestPiecesConcurrentFirstUse: the lazily built piece table is safe when
// the first decodes race (run with -race).
func TestPiecesConcurrentFirstUse(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", "vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{9707, 1879, 151645, 13708, 766, 29}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = tk.DecodeWith(ids, DecodeOptions{Special: true}) })
	}
	wg.Wait()
	for i, s := range got {
		if s != "Hello world<|im_end|><think>" {
			t.Errorf("goroutine %d: %q", i, s)
		}
	}
}
