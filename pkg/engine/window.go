package engine

import "github.com/helexa/helexa/pkg/executor"

// winStore is the scheduler's side of a model's sliding-window KV store
// (executor.Info.Window > 0): a second block pool for the windowed layers,
// whose block tables are indexed like the full store's but hold only the
// blocks a sequence's window still reaches. As a sequence advances, the
// blocks that fall out of its window are released: a full block goes to
// the pool's prefix cache (under the same chained hash as the full store's
// block at that index) and stays until evicted, so that a later request
// sharing the prefix finds the window's tail as well as the full layers'
// blocks.
//
// Each sequence holds at most perSeq window blocks at once (what a window
// plus one step's tokens reach); admission reserves that many, and a block
// released from the window returns to the sequence's reserve.
type winStore struct {
	pool   *blockPool
	window int
	perSeq int
	// chunk is the prefill budget of a step, reduced from the configured
	// one when one sequence's window blocks at that budget would not fit
	// the pool.
	chunk int
}

// newWinStore returns nil for a model without windowed layers.
func newWinStore(info executor.Info, chunk int) *winStore {
	if info.Window <= 0 {
		return nil
	}
	w := &winStore{pool: newBlockPool(info.WinNumBlocks, info.BlockSize), window: info.Window, chunk: chunk}
	for w.chunk > 1 && executor.WindowBlocks(w.window, w.chunk, info.NCtx, info.BlockSize) > info.WinNumBlocks {
		w.chunk /= 2
	}
	w.perSeq = executor.WindowBlocks(w.window, w.chunk, info.NCtx, info.BlockSize)
	return w
}

// firstBlock is the index of the first block a step starting at position
// pos reads: the one holding pos-window+1.
func (w *winStore) firstBlock(pos int) int { return max(0, pos-w.window+1) / w.pool.size }

// match finds the longest prefix, at most len(hashes) blocks of tokens
// whose full-store blocks are cached with those chained hashes, whose
// window tail is cached too. It returns the number of blocks kept and the
// window block table for them (entries before the tail are -1), taking a
// reference on each window block.
func (w *winStore) match(tokens []int32, hashes []uint64) (keep int, table []int32) {
	bs := w.pool.size
	buf := make([]int32, len(hashes))
	for k := len(hashes); k > 0; k-- {
		table = buf[:k]
		for i := range table {
			table[i] = -1
		}
		found := true
		for i := w.firstBlock(k * bs); i < k && found; i++ {
			table[i], found = w.pool.lookup(hashes[i], tokens[i*bs:(i+1)*bs])
		}
		if !found {
			continue
		}
		for _, b := range table {
			if b >= 0 {
				w.pool.acquire(b)
			}
		}
		return k, table
	}
	return 0, nil
}

// reserveFor is how many window blocks a sequence needing need blocks in
// all must still be promised when it already holds table.
func (w *winStore) reserveFor(need int, table []int32) int {
	live := 0
	for _, b := range table {
		if b >= 0 {
			live++
		}
	}
	return max(0, min(need, w.perSeq)-live)
}

// grow extends q's window table to cover n positions; false when the pool
// has no block (a reservation was not honoured).
func (w *winStore) grow(q *sequence, n int) bool {
	var ok bool
	q.wblocks, ok = w.pool.extend(q.wblocks, blocksFor(n, w.pool.size), &q.wreserve)
	return ok
}

// slide releases the window blocks q's next step no longer reads, keeping
// them promised to q.
func (w *winStore) slide(q *sequence) {
	first := min(w.firstBlock(q.computed), len(q.wblocks))
	for ; q.wlow < first; q.wlow++ {
		if b := q.wblocks[q.wlow]; b >= 0 {
			w.pool.release(b)
			q.wblocks[q.wlow] = -1
			q.wreserve++
			w.pool.reserved++
		}
	}
}

// free releases everything q holds in the window store.
func (w *winStore) free(q *sequence) {
	for _, b := range q.wblocks {
		if b >= 0 {
			w.pool.release(b)
		}
	}
	q.wblocks = nil
	w.pool.reserved -= q.wreserve
	q.wreserve = 0
}

// bytes is the memory the window blocks in use and promised will take.
func (w *winStore) bytes(info executor.Info, extra int) int64 {
	if w == nil {
		return 0
	}
	return int64(w.pool.used()+w.pool.reserved+extra) * info.WinBlockBytes
}
