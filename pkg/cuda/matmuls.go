package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

var _ compute.MultiMatMulBackend = (*Backend)(nil)

// mv3Max is the most weights one hx_mv3 launch takes.
const mv3Max = 3

// MatMuls implements compute.MultiMatMulBackend: the decode products of up
// to three weights of one device format (q, k and v; gate and up) share a
// launch, which is what a decode step pays for on a GPU. Batches that go to
// cuBLAS, and weights of mixed formats, run as one MatMul each.
func (b *Backend) MatMuls(ws []*compute.Weight, xT compute.Tensor, outs []compute.Tensor) error {
	if len(ws) != len(outs) {
		return fmt.Errorf("matmuls: %d weights, %d outputs", len(ws), len(outs))
	}
	x := dev(xT)
	if len(ws) < 2 || len(ws) > mv3Max || (x.rows >= gemmMinRows && b.d.gemmer() != nil) {
		return b.matMulsEach(ws, xT, outs)
	}
	var (
		wp   [mv3Max]devPtr
		out  [mv3Max]*tensor
		rows [mv3Max]int
		f    format
	)
	most := 0
	for i, w := range ws {
		o := dev(outs[i])
		if x.cols != w.Cols() || o.cols != w.Rows() || o.rows != x.rows {
			return fmt.Errorf("matmul %s (%d → %d): input %d × %d, output %d × %d", w.Name, w.Cols(), w.Rows(),
				x.rows, x.cols, o.rows, o.cols)
		}
		p, fi, err := b.lookup(w)
		if err != nil {
			return err
		}
		if i > 0 && fi != f {
			return b.matMulsEach(ws, xT, outs)
		}
		wp[i], out[i], rows[i], f = p, o, w.Rows(), fi
		most = max(most, rows[i])
	}
	cols := x.cols
	return b.d.do(func() error {
		for _, c := range chunks(x.rows) {
			a := newArgs(3*mv3Max + 3)
			for i := range mv3Max {
				if i < len(ws) {
					a.ptr(out[i].row(c[0])).ptr(wp[i]).i32(rows[i])
				} else {
					a.ptr(0).ptr(0).i32(0)
				}
			}
			a.ptr(x.row(c[0])).i32(cols).i32(c[1])
			if err := b.d.launch(f.mv3Kernel(), [3]int{(most + 3) / 4, len(ws), 1}, 128, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// matMulsEach runs the products one MatMul at a time.
func (b *Backend) matMulsEach(ws []*compute.Weight, x compute.Tensor, outs []compute.Tensor) error {
	for i, w := range ws {
		if err := b.MatMul(w, x, outs[i]); err != nil {
			return err
		}
	}
	return nil
}
