package cpu

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// Prepare implements compute.Backend. At the AVX-512 VNNI kernel level the CPU
// packs each Q4_K, Q6_K and Q8_0 matrix it multiplies that is a view of
// the model file (Weight.Mapped) into the kernels' interleaved layout
// (quant.Packed), once, and from then on reads only that copy; the file's
// pages are released, so the weights stay resident once, not twice. A
// weight in memory of its own (a tensor-parallel rank's column slice) is
// not packed: its bytes cannot be given back. Other types and levels use
// the mapped file as it is.
func (c *Backend) Prepare(w *compute.Weight) error {
	if w.Packed() != nil || w.Lookup || !w.Mapped || !quant.CanPack(w.Type, w.Rows(), w.Cols()) {
		return nil
	}
	p, err := quant.NewPacked(w.Type, w.Rows()*w.Mats(), w.Cols())
	if err != nil {
		return fmt.Errorf("packing %s: %w", w.Name, err)
	}
	var fail firstError
	c.pool.parallelFor(p.Groups(), 1, func(lo, hi int) {
		fail.set(p.Pack(w.Data, w.RowBytes(), lo, hi))
	})
	if fail.err != nil {
		return fmt.Errorf("packing %s: %w", w.Name, fail.err)
	}
	w.SetPacked(p)
	c.packGrowth.Add(int64(p.Bytes() - len(w.Data)))
	releasePages(w.Data)
	return nil
}

// PackedGrowth is how many bytes the packed copies of the prepared weights
// take beyond the file's bytes they replace (Q4_K packs 2.8 % larger).
func (c *Backend) PackedGrowth() int64 { return c.packGrowth.Load() }

// rowUnit is the number of weight rows a worker's range of ws must be a
// multiple of: a packed group when every weight's rows come in whole
// groups (packed weights always do), else one row.
func rowUnit(ws ...*compute.Weight) int {
	for _, w := range ws {
		if w.Rows()%quant.PackRows != 0 {
			return 1
		}
	}
	return quant.PackRows
}
