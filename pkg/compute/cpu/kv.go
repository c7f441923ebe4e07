package cpu

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// KVCache is the CPU's KV store in host memory: F32, or F16. A layer's
// keys (and its values) are head major: head h's row of position slot s
// of block b is at ((h·NumBlocks + b)·BlockSize + s)·HeadDim. One head's
// rows of a block follow each other, and so do its blocks: a sequence
// whose blocks were handed out in order (the block pool's usual order)
// has each head's keys in one run, which the hardware prefetchers stream,
// where rows of all the heads made every head's reads strided.
type KVCache struct {
	compute.KVShape
	k, v     [][]float32 // per layer: NumBlocks*BlockSize*KVDim (F32)
	k16, v16 [][]uint16  // the same as F16 bits (F16)
}

// Shape implements KV.
func (c *KVCache) Shape() compute.KVShape { return c.KVShape }

// NewKVCache allocates the pool. Pages the OS never touches cost no memory,
// so an oversized pool is cheap until it is used.
func NewKVCache(layers, numBlocks, blockSize, kvDim int) (*KVCache, error) {
	return newKVCache(compute.KVShape{Layers: layers, NumBlocks: numBlocks, BlockSize: blockSize, KVDim: kvDim})
}

func newKVCache(s compute.KVShape) (*KVCache, error) {
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
