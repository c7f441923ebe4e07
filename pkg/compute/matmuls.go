package compute

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute/quant"
)

// MultiMatMulBackend is a backend that multiplies one input by several
// weights in one pass: an optional extension of Backend (architectures
// fall back to one MatMul per weight). The CPU quantizes the input once
// and shares one parallel loop over every weight's rows, so a decode step
// pays one synchronisation for q, k and v (or gate and up) instead of
// three.
type MultiMatMulBackend interface {
	// MatMuls computes outs[i] = MatMul(ws[i], x) for every i.
	MatMuls(ws []*Weight, x Tensor, outs []Tensor) error
}

var _ MultiMatMulBackend = (*CPU)(nil)

// MatMuls implements MultiMatMulBackend. Weights whose activations are
// quantized differently (a Q8_0 weight beside K-quants) run one by one.
func (c *CPU) MatMuls(ws []*Weight, xT Tensor, outs []Tensor) error {
	if len(ws) != len(outs) {
		return fmt.Errorf("matmuls: %d weights, %d outputs", len(ws), len(outs))
	}
	for i, w := range ws {
		if xT.Cols() != w.Cols() || outs[i].Cols() != w.Rows() || outs[i].Rows() != xT.Rows() {
			return fmt.Errorf("matmul %s (%d → %d): input %d × %d, output %d × %d", w.Name, w.Cols(), w.Rows(),
				xT.Rows(), xT.Cols(), outs[i].Rows(), outs[i].Cols())
		}
		if quant.VecDotType(w.Type) != quant.VecDotType(ws[0].Type) {
			for j, w := range ws {
				if err := c.MatMul(w, xT, outs[j]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if len(ws) == 0 || xT.Rows() == 0 {
		return nil
	}
	x, nRows, n := host(xT), xT.Rows(), xT.Cols()
	xq, ab, err := c.quantizeRows(ws[0], x, nRows)
	if err != nil {
		return err
	}
	total := 0
	for _, w := range ws {
		total += w.Rows()
	}
	var fail firstError
	u := rowUnit(ws...)
	c.pool.parallelFor(total/u, matMulChunk(n, nRows, u, ws[0].RowBytes()), func(lo, hi int) {
		lo, hi = lo*u, hi*u
		off := 0
		for i, w := range ws {
			a, b := max(lo, off), min(hi, off+w.Rows())
			if a < b {
				fail.set(matMulRange(w, xq, ab, nRows, host(outs[i]), a-off, b-off))
			}
			off += w.Rows()
		}
	})
	if fail.err != nil {
		return fmt.Errorf("matmuls %s…: %w", ws[0].Name, fail.err)
	}
	return nil
}
