package cuda

import "github.com/helexa/helexa/pkg/compute"

var _ compute.FusedBackend = (*Backend)(nil)

// AddRMSNorm implements compute.FusedBackend: the residual add and the
// next norm in one launch (hx_add_rmsnorm).
func (b *Backend) AddRMSNorm(xT, yT compute.Tensor, weight *compute.Vector, eps float32, outT compute.Tensor) {
	x, y, out := dev(xT), dev(yT), dev(outT)
	cols := len(weight.Data)
	rows := x.rows * x.cols / cols
	a := newArgs(6).ptr(out.p).ptr(x.p).ptr(y.p).ptr(vec(weight)).i32(cols).f32(eps)
	b.must(func() error { return b.d.launch("hx_add_rmsnorm", [3]int{rows, 1, 1}, threads, a) })
}

// RMSNormPair implements compute.FusedBackend: the q and k head norms in
// one launch (hx_rmsnorm2).
func (b *Backend) RMSNormPair(x1T compute.Tensor, w1 *compute.Vector, out1T compute.Tensor, x2T compute.Tensor,
	w2 *compute.Vector, out2T compute.Tensor, eps float32) {
	if len(w1.Data) != len(w2.Data) {
		b.RMSNorm(x1T, w1, eps, out1T)
		b.RMSNorm(x2T, w2, eps, out2T)
		return
	}
	x1, x2, out1, out2 := dev(x1T), dev(x2T), dev(out1T), dev(out2T)
	cols := len(w1.Data)
	rows1, rows2 := x1.rows*x1.cols/cols, x2.rows*x2.cols/cols
	a := newArgs(9).ptr(out1.p).ptr(x1.p).ptr(vec(w1)).i32(rows1).ptr(out2.p).ptr(x2.p).ptr(vec(w2)).i32(cols).f32(eps)
	b.must(func() error { return b.d.launch("hx_rmsnorm2", [3]int{rows1 + rows2, 1, 1}, threads, a) })
}

// RoPEPair implements compute.FusedBackend: the q and k rotations in one
// launch (hx_rope2).
func (b *Backend) RoPEPair(qT, kT compute.Tensor, pos []int32, qHeads, kHeads, headDim int, r *compute.Rope) {
	q, k := dev(qT), dev(kT)
	neox := 0
	if r.Mode == compute.RopeNeox {
		neox = 1
	}
	b.must(func() error {
		pp, err := b.putInts(0, pos)
		if err != nil {
			return err
		}
		ff, err := b.freqFactors(r.FreqFactors)
		if err != nil {
			return err
		}
		a := newArgs(12).ptr(q.p).ptr(k.p).ptr(pp).i32(len(pos)).i32(qHeads).i32(kHeads).i32(headDim).i32(r.Dims).
			f32(r.Base).f32(r.FreqScale).ptr(ff).i32(neox)
		n := len(pos) * (qHeads + kHeads) * (r.Dims / 2)
		return b.d.launch("hx_rope2", [3]int{grid1D(n), 1, 1}, threads, a)
	})
}
