package cuda

import (
	"github.com/helexa/helexa/pkg/compute/cuda/emu"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// actRound names the kernel that rounds the activations of a product with
// a weight of type t the way the CPU quantizes them for it
// (quant.VecDotType: Q8_K for the K-quants, Q8_0 or Q8_1 for the legacy
// types), so that the GPU's products give the CPU's integer ones up to
// summation order (the K-quant matvecs multiply the Q8_K records' bytes,
// everything else the rounded F32 values); "" for F32, F16 and BF16
// weights, whose products take the activations as they are.
func actRound(t dtype.Type) string {
	switch quant.VecDotType(t) {
	case dtype.Q8_K:
		return "hx_round_q8k"
	case dtype.Q8_0, dtype.Q8_1:
		return "hx_round_q8_0"
	}
	return ""
}

// q8kRecord is the bytes of one Q8_K activation record.
const q8kRecord = emu.Q8KRecord

// roundedBytes is the size of n values rounded by kernel: the F32 values,
// followed for hx_round_q8k by their Q8_K records (n/256 of them, row
// after row), which the K-quant matvecs multiply.
func roundedBytes(kernel string, n int) int64 {
	if kernel == "hx_round_q8k" {
		return int64(n)*4 + int64(n/256)*q8kRecord
	}
	return int64(n) * 4
}

// q8kRows returns where the Q8_K records of row r of x begin, for x
// rounded by hx_round_q8k (a whole buffer of roundedBytes), or 0 for any
// other rounding (the products that take only the F32 values).
func q8kRows(x *tensor, kernel string, r int) devPtr {
	if kernel != "hx_round_q8k" {
		return 0
	}
	return x.p + devPtr(x.rows*x.cols*4) + devPtr(r*(x.cols/256)*q8kRecord)
}

// roundedInput returns x rounded by kernel (actRound) in the backend's
// buffer for that kernel, or x itself for "" (on the owner goroutine). The
// buffer is overwritten by the next call with the same kernel.
func (b *Backend) roundedInput(x *tensor, kernel string) (*tensor, error) {
	if kernel == "" {
		return x, nil
	}
	buf := b.rounded[kernel]
	if buf == nil {
		buf = &devBuf{}
		b.rounded[kernel] = buf
	}
	n := x.rows * x.cols
	p, err := buf.ensure(b.d, roundedBytes(kernel, n))
	if err != nil {
		return nil, err
	}
	per := 128 // values per block of 128 threads: four warps of one 32-value block
	a := newArgs(4).ptr(p)
	if kernel == "hx_round_q8k" {
		per = 1024 // four warps of one 256-value block
		a.ptr(p + devPtr(n*4))
	}
	if err := b.d.launch(kernel, [3]int{(n + per - 1) / per, 1, 1}, 128, a.ptr(x.p).i32(n)); err != nil {
		return nil, err
	}
	return &tensor{p: p, rows: x.rows, cols: x.cols}, nil
}

// preRounded is what a norm (RMSNorm, AddRMSNorm) leaves for the products
// that follow it: its output and, when its consumers asked last for
// hx_round_q8k, that output rounded in the same launch
// (hx_rmsnorm_q8k, hx_add_rmsnorm_q8k), which the next product takes while
// the backend has written nothing since.
type preRounded struct {
	out     tensor // the norm's output (p 0: none yet)
	kernel  string // the rounding the norm's consumers asked for last
	rounded devBuf // out rounded by kernel, when fresh
	fresh   bool   // the norm wrote rounded
	at      uint64 // the backend's write count just after the norm
}

// launch launches a norm of rows rows of cols values into out (on the
// owner goroutine): kernel, or rounding (which also rounds out as
// hx_round_q8k would, into n's buffer) when the products after the last
// norm asked for hx_round_q8k and the rows are whole 256-value blocks.
// Both kernels take out, [the rounding's F32 values and Q8_K records,]
// then what rest adds, over one block of threads per row.
func (n *preRounded) launch(b *Backend, out *tensor, rows, cols int, kernel, rounding string, rest func(*args) *args) error {
	n.out, n.fresh = tensor{p: out.p, rows: out.rows, cols: out.cols}, false
	a := newArgs(8).ptr(out.p)
	if n.kernel == "hx_round_q8k" && cols%256 == 0 && out.cols == cols {
		p, err := n.rounded.ensure(b.d, roundedBytes("hx_round_q8k", rows*cols))
		if err != nil {
			return err
		}
		kernel, n.fresh = rounding, true
		a.ptr(p).ptr(p + devPtr(rows*cols*4))
	}
	err := b.d.launch(kernel, [3]int{rows, 1, 1}, threads, rest(a))
	n.at = b.writes.n
	return err
}

// take returns the norm's rounding of x by kernel when it is current, and
// otherwise, when x is the norm's output, remembers that its consumers
// want kernel.
func (n *preRounded) take(x *tensor, kernel string, writes uint64) *tensor {
	if n.out.p == 0 || n.out.p != x.p || n.out.rows != x.rows || n.out.cols != x.cols {
		return nil
	}
	if n.fresh && n.kernel == kernel && n.at == writes {
		return &tensor{p: n.rounded.p, rows: x.rows, cols: x.cols}
	}
	n.kernel = kernel
	return nil
}
