package cpu

// scratch lends float buffers to the tasks of parallel loops (attention's
// scores), so that a decode step allocates none. A buffer made per task
// is garbage after the step; the Go runtime hands such memory back to the
// kernel between collections, and every page of it is then a fresh page
// fault the next time, which on a virtual machine also costs the host's
// fault: 85 % of a decode step's page faults and about 6 % of its time
// (Llama-3.2-1B, 2 threads) before the buffers were reused.
type scratch struct {
	free chan []float32
}

// scratchMaxFloats is the largest buffer scratch keeps (1 MiB): bigger
// ones (prefill tiles after a long context) are made per task, where the
// work they serve dwarfs the faults, and are not held between calls.
const scratchMaxFloats = 1 << 18

// newScratch keeps up to n buffers (one per worker suffices: a task gives
// its buffer back before the worker claims the next).
func newScratch(n int) scratch {
	return scratch{free: make(chan []float32, max(1, n))}
}

// get returns a buffer of n floats whose contents are undefined.
func (s scratch) get(n int) []float32 {
	select {
	case b := <-s.free:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]float32, n, max(n, min(2*n, scratchMaxFloats)))
}

// put gives b back for another task; it is dropped when too big to keep
// or when the list is full.
func (s scratch) put(b []float32) {
	if cap(b) > scratchMaxFloats {
		return
	}
	select {
	case s.free <- b:
	default:
	}
}
