package cuda

import (
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// actRound names the kernel that rounds the activations of a product with
// a weight of type t the way the CPU quantizes them for it
// (quant.VecDotType: Q8_K for the K-quants, Q8_0 or Q8_1 for the legacy
// types), so that the GPU's float products give the CPU's integer ones up
// to summation order; "" for F32, F16 and BF16 weights, whose products
// take the activations as they are.
func actRound(t dtype.Type) string {
	switch quant.VecDotType(t) {
	case dtype.Q8_K:
		return "hx_round_q8k"
	case dtype.Q8_0, dtype.Q8_1:
		return "hx_round_q8_0"
	}
	return ""
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
	p, err := buf.ensure(b.d, int64(n)*4)
	if err != nil {
		return nil, err
	}
	per := 128 // values per block of 128 threads: four warps of one 32-value block
	if kernel == "hx_round_q8k" {
		per = 1024 // four warps of one 256-value block
	}
	if err := b.d.launch(kernel, [3]int{(n + per - 1) / per, 1, 1}, 128, newArgs(3).ptr(p).ptr(x.p).i32(n)); err != nil {
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
// Both kernels take out, [the rounding's buffer,] then what rest adds,
// over one block of threads per row.
func (n *preRounded) launch(b *Backend, out *tensor, rows, cols int, kernel, rounding string, rest func(*args) *args) error {
	n.out, n.fresh = tensor{p: out.p, rows: out.rows, cols: out.cols}, false
	a := newArgs(8).ptr(out.p)
	if n.kernel == "hx_round_q8k" && cols%256 == 0 && out.cols == cols {
		p, err := n.rounded.ensure(b.d, int64(rows)*int64(cols)*4)
		if err != nil {
			return err
		}
		kernel, n.fresh = rounding, true
		a.ptr(p)
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
