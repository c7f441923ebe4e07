package compute

import "fmt"

// KVShape is the paging of a KV store: NumBlocks blocks of BlockSize
// positions for every layer, KVDim values per position for keys and as
// many for values. Position p of a sequence lives in block
// table[p/BlockSize] at slot p%BlockSize; the block tables belong to the
// caller.
type KVShape struct {
	Layers, NumBlocks, BlockSize, KVDim int
}

// KVCache is the CPU's KV store: F32 in host memory.
type KVCache struct {
	KVShape
	k, v [][]float32 // per layer: NumBlocks*BlockSize*KVDim
}

// Shape implements KV.
func (c *KVCache) Shape() KVShape { return c.KVShape }

// NewKVCache allocates the pool. Pages the OS never touches cost no memory,
// so an oversized pool is cheap until it is used.
func NewKVCache(layers, numBlocks, blockSize, kvDim int) (*KVCache, error) {
	if layers <= 0 || numBlocks <= 0 || blockSize <= 0 || kvDim <= 0 {
		return nil, fmt.Errorf("kv cache: bad shape layers=%d blocks=%d block_size=%d kv_dim=%d", layers, numBlocks, blockSize, kvDim)
	}
	c := &KVCache{KVShape: KVShape{Layers: layers, NumBlocks: numBlocks, BlockSize: blockSize, KVDim: kvDim},
		k: make([][]float32, layers), v: make([][]float32, layers)}
	n := numBlocks * blockSize * kvDim
	for l := range c.k {
		c.k[l] = make([]float32, n)
		c.v[l] = make([]float32, n)
	}
	return c, nil
}

// F32BlockBytes is the number of bytes one block takes over all layers
// with F32 keys and values.
func (s KVShape) F32BlockBytes() int64 { return int64(s.Layers) * 2 * int64(s.BlockSize*s.KVDim) * 4 }

// BlockBytes is the number of bytes one block takes over all layers.
func (c *KVCache) BlockBytes() int64 { return c.F32BlockBytes() }

// Bytes is the size of the whole pool.
func (c *KVCache) Bytes() int64 { return c.BlockBytes() * int64(c.NumBlocks) }

// offset returns the index of position pos's row in a layer slice.
func (c *KVCache) offset(blocks []int32, pos int) int {
	b := int(blocks[pos/c.BlockSize])
	return (b*c.BlockSize + pos%c.BlockSize) * c.KVDim
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
func (c KVShape) CheckSpan(s SeqSpan) error {
	end := s.Pos + s.N
	need := (end + c.BlockSize - 1) / c.BlockSize
	if len(s.Blocks) < need {
		return fmt.Errorf("block table has %d blocks, positions up to %d need %d", len(s.Blocks), end, need)
	}
	for _, b := range s.Blocks[:need] {
		if b < 0 || int(b) >= c.NumBlocks {
			return fmt.Errorf("block %d out of range [0, %d)", b, c.NumBlocks)
		}
	}
	return nil
}
