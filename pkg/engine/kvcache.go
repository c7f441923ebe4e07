package engine

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// blockPool is the scheduler's view of one executor's paged KV storage:
// which blocks are free, how many sequences reference each block, and the
// prefix cache (chained hash of a full block's tokens → block). A cached
// block nobody references sits in an LRU list; it is reused by a later
// request with the same prefix, or evicted when a fresh block is needed.
//
// blockPool is owned by the scheduler goroutine; it is not safe for
// concurrent use.
type blockPool struct {
	size     int     // positions per block
	ref      []int32 // references per block
	free     []int32 // blocks holding nothing (a stack)
	hashOf   []uint64
	cached   []bool
	tokensOf [][]int32 // a cached block's tokens, to rule out hash collisions
	index    map[uint64]int32
	// LRU of cached blocks with no references: prev/next links, -1 = none.
	prev, next []int32
	head, tail int32
	lruLen     int
	// reserved counts blocks promised to admitted sequences but not yet
	// allocated.
	reserved int
}

func newBlockPool(numBlocks, blockSize int) *blockPool {
	p := &blockPool{
		size:     blockSize,
		ref:      make([]int32, numBlocks),
		free:     make([]int32, 0, numBlocks),
		hashOf:   make([]uint64, numBlocks),
		cached:   make([]bool, numBlocks),
		tokensOf: make([][]int32, numBlocks),
		index:    make(map[uint64]int32),
		prev:     make([]int32, numBlocks),
		next:     make([]int32, numBlocks),
		head:     -1,
		tail:     -1,
	}
	for b := numBlocks - 1; b >= 0; b-- {
		p.free = append(p.free, int32(b))
	}
	return p
}

// total is the number of blocks in the pool.
func (p *blockPool) total() int { return len(p.ref) }

// available is how many blocks can still be promised: free ones plus
// evictable cached ones, minus what is already promised.
func (p *blockPool) available() int { return len(p.free) + p.lruLen - p.reserved }

// used counts blocks referenced by a sequence.
func (p *blockPool) used() int { return len(p.ref) - len(p.free) - p.lruLen }

// cachedIdle counts cached blocks no sequence references.
func (p *blockPool) cachedIdle() int { return p.lruLen }

// alloc takes a block for writing, evicting the least recently used cached
// block when none is free. It returns -1 when the pool is exhausted.
func (p *blockPool) alloc() int32 {
	var b int32
	switch {
	case len(p.free) > 0:
		b = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	case p.head >= 0:
		b = p.head
		p.lruRemove(b)
		p.uncache(b)
	default:
		return -1
	}
	p.ref[b] = 1
	return b
}

// extend appends blocks to a sequence's table until it holds n, counting
// each against the sequence's reservation (*reserve, and the pool's) while
// one is left. The blocks it takes go into the table in ascending order:
// the CPU store keeps a KV head's rows of consecutive blocks in one run,
// and blocks evicted from the LRU come out a cached prefix's last first (a
// step's attention over 4 096 positions from memory took 0.47-0.52 ms over
// ascending blocks and 0.65-0.69 over the same blocks reversed, Zen 5).
// It returns false when the pool runs out; the blocks taken until then
// stay in the table.
func (p *blockPool) extend(table []int32, n int, reserve *int) ([]int32, bool) {
	start := len(table)
	for len(table) < n {
		b := p.alloc()
		if b < 0 {
			break
		}
		if *reserve > 0 {
			*reserve--
			p.reserved--
		}
		table = append(table, b)
	}
	slices.Sort(table[start:])
	return table, len(table) >= n
}

// acquire adds a reference to a cached block (a prefix hit).
func (p *blockPool) acquire(b int32) {
	if p.ref[b] == 0 {
		p.lruRemove(b)
	}
	p.ref[b]++
}

// release drops a reference; an unreferenced block goes to the LRU when it
// is cached and back to the free list otherwise.
func (p *blockPool) release(b int32) {
	p.ref[b]--
	if p.ref[b] > 0 {
		return
	}
	if p.cached[b] {
		p.lruPush(b)
		return
	}
	p.free = append(p.free, b)
}

// releaseAll drops a reference to each block of a sequence's table, last
// block first. The free stack then hands uncached blocks out again in the
// table's order, so the next sequence's positions tend to follow each
// other in memory (a decode step's attention over 4 096 positions from
// memory takes 20-30 % less time over ascending blocks than over the same
// blocks reversed, BenchmarkAttention/decode4096mem and its shuffled
// variant, since the CPU store keeps a head's rows together; extend sorts
// what it takes, for blocks the LRU gives up); and the LRU gives up
// a cached prefix's tail before the blocks it hangs from, so what stays
// cached is still a prefix that matches.
func (p *blockPool) releaseAll(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		p.release(blocks[i])
	}
}

// register records a full block's content hash so later requests can reuse
// it. A hash that is already cached keeps its existing block.
func (p *blockPool) register(b int32, h uint64, tokens []int32) {
	if _, ok := p.index[h]; ok || p.cached[b] {
		return
	}
	p.index[h] = b
	p.hashOf[b] = h
	p.cached[b] = true
	p.tokensOf[b] = slices.Clone(tokens)
}

// lookup finds the cached block holding tokens with chained hash h.
func (p *blockPool) lookup(h uint64, tokens []int32) (int32, bool) {
	b, ok := p.index[h]
	if !ok || !slices.Equal(p.tokensOf[b], tokens) {
		return -1, false
	}
	return b, true
}

// match returns the cached blocks covering the longest prefix of tokens,
// taking a reference on each, and the chain hashes of those blocks. At most
// maxBlocks are matched.
func (p *blockPool) match(tokens []int32, maxBlocks int) (blocks []int32, hashes []uint64) {
	var h uint64
	for i := 0; i < maxBlocks; i++ {
		chunk := tokens[i*p.size : (i+1)*p.size]
		h = chainHash(h, chunk)
		b, ok := p.lookup(h, chunk)
		if !ok {
			break
		}
		p.acquire(b)
		blocks = append(blocks, b)
		hashes = append(hashes, h)
	}
	return blocks, hashes
}

func (p *blockPool) uncache(b int32) {
	if !p.cached[b] {
		return
	}
	delete(p.index, p.hashOf[b])
	p.cached[b] = false
	p.hashOf[b] = 0
	p.tokensOf[b] = nil
}

func (p *blockPool) lruPush(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.lruLen++
}

func (p *blockPool) lruRemove(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.prev[b], p.next[b] = -1, -1
	p.lruLen--
}

// chainHash hashes a block's tokens together with the hash of everything
// before it, so equal hashes mean equal prefixes.
func chainHash(prev uint64, tokens []int32) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], prev)
	h.Write(buf[:])
	for _, t := range tokens {
		binary.LittleEndian.PutUint32(buf[:4], uint32(t))
		h.Write(buf[:4])
	}
	return h.Sum64()
}

// blocksFor is the number of blocks n positions need.
func blocksFor(n, blockSize int) int { return (n + blockSize - 1) / blockSize }
