package cpu

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

var _ compute.PairedMatMulBackend = (*Backend)(nil)

// MatMuls implements compute.Backend. Weights whose activations are
// quantized differently (a Q8_0 weight beside K-quants) run one by one.
func (c *Backend) MatMuls(ws []*compute.Weight, xT compute.Tensor, outs []compute.Tensor) error {
	if len(ws) != len(outs) {
		return fmt.Errorf("matmuls: %d weights, %d outputs", len(ws), len(outs))
	}
	for i, w := range ws {
		if err := matMulShape(w, xT, outs[i]); err != nil {
			return err
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
	xq, ab, err := c.quantizeRows(ws[0], host(xT), xT.Rows())
	if err != nil {
		return err
	}
	return c.mulShared(ws, xT.Rows(), outs, func(int) ([]byte, int, int) { return xq, ab, xT.Rows() })
}

// MatMulPairs implements compute.PairedMatMulBackend. Inputs may have different
// row counts; an input that is the previous pair's too is quantized once.
// Weights whose activations are quantized differently run one by one.
func (c *Backend) MatMulPairs(ws []*compute.Weight, xs, outs []compute.Tensor) error {
	if len(ws) != len(xs) || len(ws) != len(outs) {
		return fmt.Errorf("matmul pairs: %d weights, %d inputs, %d outputs", len(ws), len(xs), len(outs))
	}
	size, rows := 0, 0
	for i, w := range ws {
		if err := matMulShape(w, xs[i], outs[i]); err != nil {
			return err
		}
		if quant.VecDotType(w.Type) != quant.VecDotType(ws[0].Type) {
			for j, w := range ws {
				if err := c.MatMul(w, xs[j], outs[j]); err != nil {
					return err
				}
			}
			return nil
		}
		size += xs[i].Rows() * quant.ActivationBytes(w.Type, w.Cols())
		rows = max(rows, xs[i].Rows())
	}
	if rows == 0 {
		return nil
	}
	if cap(c.xq) < size {
		c.xq = make([]byte, size)
	}
	buf, next := c.xq[:size], 0
	c.xqSpan = c.xqSpan[:0]
	for i, w := range ws {
		nr, ab := xs[i].Rows(), quant.ActivationBytes(w.Type, w.Cols())
		if i > 0 && sameRows(xs[i], xs[i-1]) && w.Cols() == ws[i-1].Cols() && ab == quant.ActivationBytes(ws[i-1].Type, w.Cols()) {
			c.xqSpan = append(c.xqSpan, c.xqSpan[i-1]) // the previous pair's rows
			continue
		}
		if nr > 0 {
			if err := c.quantizeTo(w, host(xs[i]), nr, buf[next:next+nr*ab]); err != nil {
				return err
			}
		}
		c.xqSpan = append(c.xqSpan, [2]int{next, next + nr*ab})
		next += nr * ab
	}
	return c.mulShared(ws, rows, outs, func(i int) ([]byte, int, int) {
		nr, sp := xs[i].Rows(), c.xqSpan[i]
		if nr == 0 {
			return nil, 0, 0
		}
		return buf[sp[0]:sp[1]], (sp[1] - sp[0]) / nr, nr
	})
}

// mulShared runs the products of every weight in one parallel loop over
// all their rows; act gives weight i's quantized activation rows, the
// bytes of one and how many (at most nRows, which sizes the chunks).
func (c *Backend) mulShared(ws []*compute.Weight, nRows int, outs []compute.Tensor, act func(i int) ([]byte, int, int)) error {
	total := 0
	for _, w := range ws {
		total += w.Rows()
	}
	var fail firstError
	u := rowUnit(ws...)
	c.pool.parallelFor(total/u, matMulChunk(ws[0].Cols(), nRows, u, ws[0].RowBytes()), func(lo, hi int) {
		lo, hi = lo*u, hi*u
		off := 0
		for i, w := range ws {
			a, b := max(lo, off), min(hi, off+w.Rows())
			if a < b {
				if xq, ab, nr := act(i); nr > 0 {
					fail.set(matMulRange(w, xq, ab, nr, host(outs[i]), a-off, b-off))
				}
			}
			off += w.Rows()
		}
	})
	if fail.err != nil {
		return fmt.Errorf("matmuls %s…: %w", ws[0].Name, fail.err)
	}
	return nil
}

// sameRows reports whether a and b are the same rows of the same memory.
func sameRows(a, b compute.Tensor) bool {
	x, y := host(a), host(b)
	return a.Rows() == b.Rows() && len(x) > 0 && len(x) == len(y) && &x[0] == &y[0]
}
