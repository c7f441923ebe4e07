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
	// a run of memory (see KVCache).
	HeadDim int
	// F16 stores keys and values as F16 (half the memory; attention
	// converts them back to F32 as it reads them).
	F16 bool
}

// KVCache is the CPU's KV store in host memory: F32, or F16. A layer's
// keys (and its values) are head major: head h's row of position slot s
// of block b is at ((h·NumBlocks + b)·BlockSize + s)·HeadDim. One head's
// rows of a block follow each other, and so do its blocks: a sequence
// whose blocks were handed out in order (the block pool's usual order)
// has each head's keys in one run, which the hardware prefetchers stream,
// where rows of all the heads made every head's reads strided.
type KVCache struct {
	KVShape
	k, v     [][]float32 // per layer: NumBlocks*BlockSize*KVDim (F32)
	k16, v16 [][]uint16  // the same as F16 bits (F16)
}

// Shape implements KV.
func (c *KVCache) Shape() KVShape { return c.KVShape }

// NewKVCache allocates the pool. Pages the OS never touches cost no memory,
// so an oversized pool is cheap until it is used.
func NewKVCache(layers, numBlocks, blockSize, kvDim int) (*KVCache, error) {
	return newKVCache(KVShape{Layers: layers, NumBlocks: numBlocks, BlockSize: blockSize, KVDim: kvDim})
}

func newKVCache(s KVShape) (*KVCache, error) {
	if s.Layers < 0 || s.NumBlocks <= 0 || s.BlockSize <= 0 || s.KVDim <= 0 || s.HeadDim < 0 || s.HeadDim > 0 && s.KVDim%s.HeadDim != 0 {
		return nil, fmt.Errorf("kv cache: bad shape layers=%d blocks=%d block_size=%d kv_dim=%d head_dim=%d", s.Layers, s.NumBlocks, s.BlockSize, s.KVDim, s.HeadDim)
	}
	c := &KVCache{KVShape: s}
	n := s.NumBlocks * s.BlockSize * s.KVDim
	for range s.Layers {
		if s.F16 {
			c.k16, c.v16 = append(c.k16, make([]uint16, n)), append(c.v16, make([]uint16, n))
		} else {
			c.k, c.v = append(c.k, make([]float32, n)), append(c.v, make([]float32, n))
		}
	}
	return c, nil
}

// BlockBytesOf is the number of bytes one block takes over all layers.
func (s KVShape) BlockBytesOf() int64 {
	elem := int64(4)
	if s.F16 {
		elem = 2
	}
	return int64(s.Layers) * 2 * int64(s.BlockSize*s.KVDim) * elem
}

// BlockBytes is the number of bytes one block takes over all layers.
func (c *KVCache) BlockBytes() int64 { return c.BlockBytesOf() }

// Bytes is the size of the whole pool.
func (c *KVCache) Bytes() int64 { return c.BlockBytes() * int64(c.NumBlocks) }

// headDim is the size of one head of the store's rows.
func (c *KVCache) headDim() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	return c.KVDim
}

// column is where value col (of KVDim) of every cached row lies in a layer
// slice: the row of position slot s of block b has it at base +
// (b·BlockSize+s)·stride. A head's values are the stride values from its
// first column's base.
func (c *KVCache) column(col int) (base, stride int) {
	hd := c.headDim()
	return col/hd*c.NumBlocks*c.BlockSize*hd + col%hd, hd
}

// offset returns the index in a layer slice of value col of position pos's
// row.
func (c *KVCache) offset(blocks []int32, pos, col int) int {
	base, stride := c.column(col)
	return base + (int(blocks[pos/c.BlockSize])*c.BlockSize+pos%c.BlockSize)*stride
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
