package engine

import "github.com/helexa/helexa/pkg/executor"

// snapCache is the scheduler's index of the recurrent state snapshots its
// executor keeps (executor.Info.StateSnapshots): a model with recurrent
// layers cannot resume from cached KV pages alone, since its state sums up
// the whole history, so the scheduler has the state saved where a prompt's
// last full block ends, keyed by the chained hash of the blocks before it.
// A later request whose cached prefix reaches such a boundary restores the
// snapshot and prefills only what follows: in a chat, every turn but the
// last answer and the new message.
//
// At most cap snapshots are kept, least recently used evicted first; an
// evicted snapshot's key goes to the executor with the next step
// (Work.DropStates). A snapshot a starting sequence is about to restore is
// pinned and never evicted.
type snapCache struct {
	byHash map[uint64]*snapEntry
	cap    int
	last   uint64 // the last key handed out
	clock  uint64
	drops  []uint64
}

type snapEntry struct {
	key   uint64
	pos   int
	pins  int
	used  uint64
	ready bool // saved by a step that succeeded
}

// newSnapCache returns nil unless the executor keeps snapshots of a
// recurrent model's state.
func newSnapCache(info executor.Info, capacity int) *snapCache {
	if !info.Recurrent || !info.StateSnapshots || capacity <= 0 {
		return nil
	}
	return &snapCache{byHash: map[uint64]*snapEntry{}, cap: capacity}
}

// longest returns the most blocks k ≤ len(hashes) of a cached prefix with a
// saved snapshot k·bs positions in, and that snapshot, pinned (k = 0: none).
func (c *snapCache) longest(hashes []uint64, bs int) (int, *snapEntry) {
	for k := len(hashes); k > 0; k-- {
		if e := c.byHash[hashes[k-1]]; e != nil && e.ready && e.pos == k*bs {
			e.pins++
			c.clock++
			e.used = c.clock
			return k, e
		}
	}
	return 0, nil
}

func (c *snapCache) unpin(e *snapEntry) { e.pins-- }

// add returns the key under which to save the state at pos of the prefix
// with chained hash h, or 0 when that prefix has a snapshot already or
// every snapshot is pinned.
func (c *snapCache) add(h uint64, pos int) uint64 {
	if _, ok := c.byHash[h]; ok {
		return 0
	}
	if len(c.byHash) >= c.cap && !c.evict() {
		return 0
	}
	c.last++
	c.clock++
	c.byHash[h] = &snapEntry{key: c.last, pos: pos, used: c.clock}
	return c.last
}

// evict drops the least recently used snapshot nobody is restoring.
func (c *snapCache) evict() bool {
	var oldH uint64
	var old *snapEntry
	for h, e := range c.byHash {
		if e.pins == 0 && e.ready && (old == nil || e.used < old.used) {
			oldH, old = h, e
		}
	}
	if old == nil {
		return false
	}
	c.drop(oldH)
	return true
}

func (c *snapCache) drop(h uint64) {
	if e := c.byHash[h]; e != nil {
		delete(c.byHash, h)
		c.drops = append(c.drops, e.key)
	}
}

// saved records the outcome of the step that was to save prefix h.
func (c *snapCache) saved(h uint64, ok bool) {
	if !ok {
		c.drop(h) // the executor may hold it or not: dropping is harmless
		return
	}
	if e := c.byHash[h]; e != nil {
		e.ready = true
	}
}

// takeDrops returns the keys to free with the next step.
func (c *snapCache) takeDrops() []uint64 {
	d := c.drops
	c.drops = nil
	return d
}

// snapshotPlan is where a sequence's prompt gets its snapshot, and the
// chained hash of the prompt before it: the last block boundary before the
// prompt's last token, when the sequence has not already resumed there
// (cached holds the chained hashes of the blocks it resumed with).
func snapshotPlan(prompt []int32, bs int, cached []uint64) (at int, hash uint64) {
	at = (len(prompt) - 1) / bs * bs
	if at <= len(cached)*bs {
		return 0, 0
	}
	if len(cached) > 0 {
		hash = cached[len(cached)-1]
	}
	for i := len(cached); i < at/bs; i++ {
		hash = chainHash(hash, prompt[i*bs:(i+1)*bs])
	}
	return at, hash
}
