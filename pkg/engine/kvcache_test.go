package engine

import (
	"slices"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
)

func TestBlockPoolPrefixCache(t *testing.T) {
	p := newBlockPool(4, 2)
	tokens := []int32{1, 2, 3, 4, 5}
	// A sequence writes two full blocks and registers them.
	var h uint64
	var blocks []int32
	for i := range 2 {
		b := p.alloc()
		h = chainHash(h, tokens[i*2:i*2+2])
		p.register(b, h, tokens[i*2:i*2+2])
		blocks = append(blocks, b)
	}
	if p.used() != 2 || p.available() != 2 {
		t.Fatalf("used %d available %d", p.used(), p.available())
	}
	for _, b := range blocks {
		p.release(b)
	}
	if p.used() != 0 || p.cachedIdle() != 2 || p.available() != 4 {
		t.Fatalf("after release: used %d cached %d available %d", p.used(), p.cachedIdle(), p.available())
	}
	// Same prefix: both blocks come back; a different second block stops
	// the match after one.
	got, _ := p.match([]int32{1, 2, 3, 4, 9}, 2)
	if !slices.Equal(got, blocks) {
		t.Fatalf("match %v, want %v", got, blocks)
	}
	for _, b := range got {
		p.release(b)
	}
	got, _ = p.match([]int32{1, 2, 3, 9, 9}, 2)
	if !slices.Equal(got, blocks[:1]) {
		t.Fatalf("partial match %v, want %v", got, blocks[:1])
	}
	p.release(got[0])
	// Exhausting the free list evicts cached blocks, least recently used
	// first (blocks[1] was released before blocks[0] last time).
	var taken []int32
	for range 4 {
		b := p.alloc()
		if b < 0 {
			t.Fatal("pool exhausted too early")
		}
		taken = append(taken, b)
	}
	if p.alloc() != -1 {
		t.Fatal("alloc beyond the pool")
	}
	if !slices.Contains(taken, blocks[0]) || p.cachedIdle() != 0 {
		t.Fatalf("cached blocks were not evicted: %v", taken)
	}
	if got, _ := p.match(tokens, 2); len(got) != 0 {
		t.Fatalf("evicted blocks still match: %v", got)
	}
}

func TestStopper(t *testing.T) {
	tests := []struct {
		stops  []string
		pieces []string
		want   string
		stop   bool
	}{
		{[]string{"END"}, []string{"ab", "E", "N", "D", "x"}, "ab", true},
		{[]string{"END"}, []string{"abE", "Nx"}, "abENx", false},
		{[]string{"END", "ND!"}, []string{"aN", "D!"}, "a", true},
		{[]string{"é"}, []string{"caf", "é"}, "caf", true},
		{nil, []string{"a", "b"}, "ab", false},
	}
	for _, tt := range tests {
		s := stopper{stops: tt.stops}
		var out string
		stopped := false
		for _, p := range tt.pieces {
			e, st := s.push(p)
			out += e
			if st {
				stopped = true
				break
			}
		}
		if !stopped {
			out += s.flush()
		}
		if out != tt.want || stopped != tt.stop {
			t.Errorf("%v %v: got %q %v, want %q %v", tt.stops, tt.pieces, out, stopped, tt.want, tt.stop)
		}
	}
}

// TestBlockPoolReleaseAllOrder: a sequence's table released with
// releaseAll comes back from alloc in the table's order (uncached blocks),
// and eviction takes a cached prefix's last block first, so the rest of
// the prefix still matches.
func TestBlockPoolReleaseAllOrder(t *testing.T) {
	p := newBlockPool(6, 2)
	var table []int32
	for range 4 {
		table = append(table, p.alloc())
	}
	p.releaseAll(table)
	for i := range table {
		if b := p.alloc(); b != table[i] {
			t.Fatalf("alloc %d after releaseAll gave block %d, want %d (table %v)", i, b, table[i], table)
		}
	}

	p = newBlockPool(3, 2)
	tokens := []int32{1, 2, 3, 4, 5, 6, 7}
	cached := cachePrefix(p, tokens, 3)
	p.releaseAll(cached)
	if b := p.alloc(); b != cached[2] {
		t.Fatalf("eviction took block %d, want the prefix's last, %d", b, cached[2])
	}
	if got, _ := p.match(tokens, 3); !slices.Equal(got, cached[:2]) {
		t.Fatalf("after one eviction the prefix matches %v, want %v", got, cached[:2])
	}
}

// TestEnsureBlocksAscending: the blocks a sequence takes in one step go
// into its table in ascending order, also when they come out of the prefix
// cache's LRU (a cached prefix's last block first).
func TestEnsureBlocksAscending(t *testing.T) {
	p := newBlockPool(8, 2)
	p.releaseAll(cachePrefix(p, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 6)) // the free stack holds 2 blocks, the LRU 6
	s := &scheduler{info: executor.Info{BlockSize: 2}, pool: p}
	q := &sequence{blocks: []int32{p.alloc()}}
	if !s.ensureBlocks(q, 14) {
		t.Fatal("ensureBlocks failed with 7 blocks left")
	}
	if len(q.blocks) != 7 || !slices.IsSorted(q.blocks[1:]) {
		t.Fatalf("table %v: want 7 blocks, those after the first ascending", q.blocks)
	}
}

// cachePrefix takes n blocks of p (of 2 positions) for the first 2n tokens
// and registers them as a cached prefix, as a finished prompt's are.
func cachePrefix(p *blockPool, tokens []int32, n int) []int32 {
	var h uint64
	var cached []int32
	for i := range n {
		b := p.alloc()
		h = chainHash(h, tokens[2*i:2*i+2])
		p.register(b, h, tokens[2*i:2*i+2])
		cached = append(cached, b)
	}
	return cached
}
