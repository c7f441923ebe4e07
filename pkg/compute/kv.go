package compute

import "fmt"

// KVShape is the paging of a KV store: NumBlocks blocks of BlockSize
// positions for every layer (a store may have no layers: a model whose
// every attention layer is windowed keeps only its window store), KVDim
// values per position for keys and as many for values. Position p of a
// sequence lives in block table[p/BlockSize] at slot p%BlockSize; the
// block tables belong to the caller.
type KVShape struct {
	Layers, NumBlocks, BlockSize, KVDim int
	// HeadDim is the size of one KV head (KVDim is a whole number of
	// them; 0 is KVDim, one head). The CPU store keeps each head's rows
	// together, so that attention, which reads one head at a time, reads
	// a run of memory (see cpu.KVCache).
	HeadDim int
	// F16 stores keys and values as F16 (half the memory; attention
	// converts them back to F32 as it reads them).
	F16 bool
}

// BlockBytesOf is the number of bytes one block takes over all layers.
func (s KVShape) BlockBytesOf() int64 {
	elem := int64(4)
	if s.F16 {
		elem = 2
	}
	return int64(s.Layers) * 2 * int64(s.BlockSize*s.KVDim) * elem
}

// SeqSpan is one sequence's share of a batch: rows [Row, Row+N) of the
// batch hold the tokens at positions [Pos, Pos+N), and Blocks is the
// sequence's block table covering [0, Pos+N).
type SeqSpan struct {
	Row, N, Pos int
	Blocks      []int32
}

// CheckSpan verifies that a span's block table covers its positions and
// names valid blocks.
func (c KVShape) CheckSpan(s SeqSpan) error { return c.checkTable(s, 0, "block") }

// CheckWindowSpan verifies a sliding-window store's block table for a span
// whose queries see the last window positions: only the blocks holding
// positions [max(0, Pos-window+1), Pos+N) are read or written, so only
// those must name valid blocks; entries before them may be anything (the
// caller has freed those blocks).
func (c KVShape) CheckWindowSpan(s SeqSpan, window int) error {
	return c.checkTable(s, max(0, s.Pos-window+1)/c.BlockSize, "window block")
}

// checkTable verifies that s's table covers its positions and that its
// entries from first on name valid blocks (what names them in errors).
func (c KVShape) checkTable(s SeqSpan, first int, what string) error {
	end := s.Pos + s.N
	need := (end + c.BlockSize - 1) / c.BlockSize
	if len(s.Blocks) < need {
		return fmt.Errorf("%s table has %d blocks, positions up to %d need %d", what, len(s.Blocks), end, need)
	}
	for _, b := range s.Blocks[first:need] {
		if b < 0 || int(b) >= c.NumBlocks {
			return fmt.Errorf("%s %d out of range [0, %d)", what, b, c.NumBlocks)
		}
	}
	return nil
}
