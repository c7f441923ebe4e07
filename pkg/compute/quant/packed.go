package quant

import (
	"errors"
	"fmt"

	"github.com/helexa/helexa/pkg/dtype"
)

// PackRows is the number of weight rows a packed group holds.
const PackRows = 16

// ErrNoMemory reports that a kernel could not allocate its scratch buffers.
var ErrNoMemory = errors.New("out of memory")

// Packed is a weight matrix rearranged once, at load, for the AVX-512 VNNI
// kernels: groups of PackRows rows whose values interleave four at a time,
// so that one vector instruction multiplies the same four positions of 16
// rows with four activation values (kernels_r16.c describes the layout).
// Decode then runs about a quarter of the instructions per weight of the
// row-at-a-time kernels. Q4_K, Q6_K and Q8_0 pack; a Q4_K matrix grows by
// 2.8 %, the others keep their size (Q8_0 rows of an odd number of blocks
// grow by 544 bytes a group). The results are those of
// VecDotRowsMulti at the VNNI level up to float rounding (the same exact
// integer sums, added in another order).
type Packed struct {
	typ   dtype.Type
	cols  int
	group int // bytes per group
	data  []byte
}

// CanPack reports whether a rows × cols matrix of type t packs at this
// process's kernel level.
func CanPack(t dtype.Type, rows, cols int) bool {
	return ActiveLevel() >= LevelVNNI && packs(t, rows, cols)
}

// packs is CanPack at any level the CPU runs.
func packs(t dtype.Type, rows, cols int) bool {
	if maxLevel() < LevelVNNI || rows <= 0 || rows%PackRows != 0 || cols <= 0 {
		return false
	}
	l, ok := layoutOf(t)
	return ok && cols%l.block == 0 && packGroupBytes(t, cols) > 0
}

// NewPacked allocates a packed matrix of rows × cols values of type t, to
// be filled with Pack. It fails when CanPack does not hold.
func NewPacked(t dtype.Type, rows, cols int) (*Packed, error) {
	if !CanPack(t, rows, cols) {
		return nil, fmt.Errorf("quant: %s %d × %d does not pack at the %s level: %w", t, rows, cols, ActiveLevel(), ErrUnsupportedType)
	}
	return newPacked(t, rows, cols), nil
}

// newPacked is NewPacked for a shape that packs(t, rows, cols).
func newPacked(t dtype.Type, rows, cols int) *Packed {
	g := packGroupBytes(t, cols)
	return &Packed{typ: t, cols: cols, group: g, data: make([]byte, rows/PackRows*g)}
}

// Groups is the number of groups of PackRows rows.
func (p *Packed) Groups() int { return len(p.data) / p.group }

// Bytes is the memory the packed matrix takes.
func (p *Packed) Bytes() int { return len(p.data) }

// Pack fills groups [g0, g1) from the matrix's rows in their file layout
// (w holds every row, rowBytes apart).
func (p *Packed) Pack(w []byte, rowBytes, g0, g1 int) error {
	l, _ := layoutOf(p.typ)
	if rowBytes < p.cols/l.block*l.wsize || g0 < 0 || g1 > p.Groups() || len(w) < g1*PackRows*rowBytes {
		return fmt.Errorf("quant: packing groups [%d, %d) of %d from %d bytes of %d-byte rows: %w", g0, g1, p.Groups(), len(w), rowBytes, ErrBufferSize)
	}
	if g0 >= g1 {
		return nil
	}
	packGroups(p.typ, w[g0*PackRows*rowBytes:], rowBytes, g1-g0, p.cols, p.data[g0*p.group:])
	return nil
}

// Slice is groups [g0, g1) as a packed matrix of their rows, sharing the
// memory (one expert of a stack of them).
func (p *Packed) Slice(g0, g1 int) *Packed {
	return &Packed{typ: p.typ, cols: p.cols, group: p.group, data: p.data[g0*p.group : g1*p.group]}
}

// MulRows computes the rows of groups [g0, g1) times nX activation rows
// (quantized by QuantizeActivations, xStride bytes apart) into
// out[j·outStride + r − PackRows·g0] for each such row r and activation
// row j: VecDotRowsMulti on the packed layout.
func (p *Packed) MulRows(g0, g1 int, xq []byte, xStride, nX int, out []float32, outStride int) error {
	if g0 < 0 || g1 > p.Groups() || nX < 0 {
		return fmt.Errorf("quant: packed rows: groups [%d, %d) of %d, %d activation rows: %w", g0, g1, p.Groups(), nX, ErrBufferSize)
	}
	if g0 >= g1 || nX == 0 {
		return nil
	}
	rows, ab := (g1-g0)*PackRows, ActivationBytes(p.typ, p.cols)
	if xStride < ab || outStride < rows || len(xq) < (nX-1)*xStride+ab || len(out) < (nX-1)*outStride+rows {
		return fmt.Errorf("quant: packed rows %s: %d activation rows of %d bytes (stride %d) into %d outputs of %d rows (stride %d): %w",
			p.typ, nX, len(xq), xStride, len(out), rows, outStride, ErrBufferSize)
	}
	if !packedRows(p.typ, p.data[g0*p.group:], g1-g0, xq, xStride, nX, p.cols, out, outStride) {
		return fmt.Errorf("quant: packed rows %s: %w", p.typ, ErrNoMemory)
	}
	return nil
}
