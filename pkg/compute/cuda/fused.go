package cuda

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute"
)

// AddRMSNorm implements compute.Backend: the residual add and the
// next norm in one launch (hx_add_rmsnorm), which also rounds the norm for
// the products that follow it when they asked last for hx_round_q8k
// (hx_add_rmsnorm_q8k; see preRounded).
func (b *Backend) AddRMSNorm(xT, yT compute.Tensor, weight *compute.Vector, eps float32, outT compute.Tensor) {
	x, y, out := dev(xT), dev(yT), dev(outT)
	cols := len(weight.Data)
	rows := x.rows * x.cols / cols
	b.must(func() error {
		return b.norm.launch(b, out, rows, cols, "hx_add_rmsnorm", "hx_add_rmsnorm_q8k", func(a *args) *args {
			return a.ptr(x.p).ptr(y.p).ptr(vec(weight)).i32(cols).f32(eps)
		})
	})
}

// RMSNormPair implements compute.Backend: the q and k head norms in
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

// RoPEPairStoreKV implements compute.Backend: both rotations and the
// store of k and v in one launch (hx_rope2_store_*).
func (b *Backend) RoPEPairStoreKV(q, k, v compute.Tensor, pos []int32, qHeads, kHeads, headDim int, r *compute.Rope,
	kvs compute.KV, layer int, spans []compute.SeqSpan) {
	b.ropeStore(q, k, v, nil, pos, qHeads, kHeads, headDim, r, kvs, layer, spans)
}

// NormRoPEPairStoreKV implements compute.Backend: the head norms,
// both rotations and the store in one launch (hx_norm_rope2_store_*) for
// heads of at most 256 values; otherwise RMSNormPair and RoPEPairStoreKV.
func (b *Backend) NormRoPEPairStoreKV(q, k, v compute.Tensor, qNorm, kNorm *compute.Vector, eps float32, pos []int32,
	qHeads, kHeads, headDim int, r *compute.Rope, kvs compute.KV, layer int, spans []compute.SeqSpan) {
	if headDim > 256 || len(qNorm.Data) != headDim || len(kNorm.Data) != headDim {
		qh, kh := b.View(q, len(pos)*qHeads, headDim), b.View(k, len(pos)*kHeads, headDim)
		b.RMSNormPair(qh, qNorm, qh, kh, kNorm, kh, eps)
		b.RoPEPairStoreKV(q, k, v, pos, qHeads, kHeads, headDim, r, kvs, layer, spans)
		return
	}
	b.ropeStore(q, k, v, &headNorms{qNorm, kNorm, eps}, pos, qHeads, kHeads, headDim, r, kvs, layer, spans)
}

// headNorms are the per-head query and key norms NormRoPEPairStoreKV
// applies before the rotations.
type headNorms struct {
	q, k *compute.Vector
	eps  float32
}

// ropeStore launches hx_rope2_store_*, or hx_norm_rope2_store_* with
// norms.
func (b *Backend) ropeStore(qT, kT, vT compute.Tensor, norms *headNorms, pos []int32, qHeads, kHeads, headDim int,
	r *compute.Rope, kvs compute.KV, layer int, spans []compute.SeqSpan) {
	kv, q, k, v := kvOf(kvs), dev(qT), dev(kT), dev(vT)
	if kHeads*headDim != kv.KVDim {
		panic(fmt.Sprintf("cuda: %d key heads of %d values for a KV store %d wide", kHeads, headDim, kv.KVDim))
	}
	b.must(func() error {
		e, err := b.plans.get(b.d, kv.KVShape, spans, 0, true)
		if err != nil {
			return err
		}
		if e.rows != len(pos) {
			return fmt.Errorf("rope and store: %d positions for %d rows", len(pos), e.rows)
		}
		pp, ff, neox, err := b.ropeInputs(pos, r)
		if err != nil {
			return err
		}
		a := newArgs(19).ptr(kv.k[layer]).ptr(kv.v[layer]).ptr(q.p).ptr(k.p).ptr(v.p)
		if norms != nil {
			a.ptr(vec(norms.q)).ptr(vec(norms.k)).f32(norms.eps)
		}
		a.ptr(pp).ptr(e.ptr[0]).i32(len(pos)).i32(qHeads).i32(kHeads).i32(headDim).i32(r.Dims).f32(r.Base).
			f32(r.FreqScale).ptr(ff).i32(neox)
		if norms != nil {
			grid := len(pos) * (qHeads + 2*kHeads)
			return b.d.launch("hx_norm_rope2_store_"+kv.suffix(), [3]int{grid, 1, 1}, (headDim+31)/32*32, a)
		}
		n := len(pos)*(qHeads+kHeads)*(r.Dims/2) + len(pos)*kv.KVDim
		return b.d.launch("hx_rope2_store_"+kv.suffix(), [3]int{grid1D(n), 1, 1}, threads, a)
	})
}

// GatedMatMul implements compute.Backend: for a decode batch with
// gate and up in one format and rounding, both products and SwiGLU in one
// launch (hx_mvg); otherwise MatMuls and SwiGLU.
func (b *Backend) GatedMatMul(gate, up *compute.Weight, xT, g, u, hT compute.Tensor) error {
	x := dev(xT)
	if x.rows >= gemmMinRows && b.d.gemmer() != nil || gate.Rows() != up.Rows() {
		return b.gatedEach(gate, up, xT, g, u, hT)
	}
	jobs, err := b.jobs([]*compute.Weight{gate, up}, x, []compute.Tensor{hT, hT})
	if err != nil {
		return err
	}
	gj, uj := jobs[0], jobs[1]
	if gj.f != uj.f || gj.round != uj.round {
		return b.gatedEach(gate, up, xT, g, u, hT)
	}
	rows, h := gate.Rows(), gj.out
	return b.d.do(func() error {
		x, err := (&roundings{x: x}).get(b, gj.round)
		if err != nil {
			return err
		}
		for _, c := range chunks(x.rows) {
			a := newArgs(8).ptr(h.row(c[0])).ptr(gj.wp).ptr(uj.wp).ptr(x.row(c[0])).ptr(q8kRows(x, gj.round, c[0])).
				i32(rows).i32(x.cols).i32(c[1])
			if err := b.d.launch(gj.f.mvgKernel(), [3]int{mvBlocks(rows), 1, 1}, 128, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// gatedEach is GatedMatMul as its three operations.
func (b *Backend) gatedEach(gate, up *compute.Weight, x, g, u, h compute.Tensor) error {
	if err := b.MatMuls([]*compute.Weight{gate, up}, x, []compute.Tensor{g, u}); err != nil {
		return err
	}
	b.SwiGLU(g, u, h)
	return nil
}

// ArgMaxRows implements compute.Backend (hx_argmax_rows): greedy
// decoding downloads one int per sequence instead of its logits.
func (b *Backend) ArgMaxRows(tT compute.Tensor, rows []int32, out []int32) error {
	t := dev(tT)
	if err := compute.CheckArgMaxRows(tT, rows, out); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	return b.d.do(func() error {
		rp, err := b.putInts(1, rows)
		if err != nil {
			return err
		}
		n := int64(len(rows)) * 8
		kp, err := b.argmax.ensure(b.d, n)
		if err != nil {
			return err
		}
		if err := b.d.zero(kp, n); err != nil {
			return err
		}
		a := newArgs(4).ptr(kp).ptr(t.p).ptr(rp).i32(t.cols)
		if err := b.d.launch("hx_argmax_rows", [3]int{len(rows), argmaxSlices(t.cols), 1}, argmaxThreads, a); err != nil {
			return err
		}
		keys := slices.Grow(b.argmaxKeys[:0], len(rows))[:len(rows)]
		b.argmaxKeys = keys
		if err := b.d.download(unsafe.Pointer(&keys[0]), kp, n); err != nil {
			return err
		}
		for i, k := range keys {
			out[i] = argmaxIndex(k)
		}
		return nil
	})
}

// hx_argmax_rows takes each row in slices of argmaxThreads·8 values (one
// round of loads per thread), at most argmaxMaxSlices of them.
const (
	argmaxThreads   = 256
	argmaxMaxSlices = 128
)

// argmaxSlices is the slices hx_argmax_rows splits a row of cols values
// into.
func argmaxSlices(cols int) int {
	return min(max((cols+argmaxThreads*8-1)/(argmaxThreads*8), 1), argmaxMaxSlices)
}

// argmaxIndex is the index a key of hx_argmax_rows names (-1: none).
func argmaxIndex(key uint64) int32 {
	if key == 0 {
		return -1
	}
	return int32(0xffffffff - uint32(key))
}
