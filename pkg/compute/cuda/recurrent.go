package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// ConvSiLU implements compute.Backend: one launch per span (each
// sequence has its own state).
func (b *Backend) ConvSiLU(xT compute.Tensor, spans []compute.SeqSpan, states []compute.Tensor, w *compute.Vector, outT compute.Tensor) {
	x, out := dev(xT), dev(outT)
	ch := x.cols
	if len(w.Data)%ch != 0 || len(states) != len(spans) {
		panic(fmt.Sprintf("cuda: ConvSiLU of %d channels with %d taps and %d states for %d spans", ch, len(w.Data), len(states), len(spans)))
	}
	k := len(w.Data) / ch
	for i, sp := range spans {
		st := dev(states[i])
		if st.rows*st.cols != (k-1)*ch {
			panic(fmt.Sprintf("cuda: ConvSiLU state of %d values, want %d", st.rows*st.cols, (k-1)*ch))
		}
		a := newArgs(8).ptr(out.p).ptr(x.p).ptr(vec(w)).ptr(st.p).i32(sp.Row).i32(sp.N).i32(ch).i32(k)
		b.must(func() error { return b.d.launch("hx_conv_silu", [3]int{grid1D(ch), 1, 1}, threads, a) })
	}
}

// GatedDeltaNet implements compute.Backend: q and k heads are
// L2-normalised in place for the whole batch, then the delta rule runs
// once per span, a block per value head.
func (b *Backend) GatedDeltaNet(qkvT, alphaT, betaT compute.Tensor, spans []compute.SeqSpan, states []compute.Tensor, d *compute.DeltaNet, outT compute.Tensor) {
	qkv, alpha, beta, out := dev(qkvT), dev(alphaT), dev(betaT), dev(outT)
	dim, kh, vh := d.Dim, d.KHeads, d.VHeads
	width := (2*kh + vh) * dim
	if qkv.cols != width || out.cols != vh*dim || alpha.cols != vh || beta.cols != vh || len(states) != len(spans) {
		panic(fmt.Sprintf("cuda: GatedDeltaNet shapes qkv %d, alpha %d, beta %d, out %d, %d states for %d spans (heads %d/%d × %d)",
			qkv.cols, alpha.cols, beta.cols, out.cols, len(states), len(spans), kh, vh, dim))
	}
	grouped := 0
	if d.Grouped {
		grouped = 1
	}
	norm := newArgs(5).ptr(qkv.p).i32(2 * kh).i32(dim).i32(width).f32(d.Eps)
	b.must(func() error { return b.d.launch("hx_l2norm_heads", [3]int{qkv.rows, 2 * kh, 1}, 32, norm) })
	for i, sp := range spans {
		st := dev(states[i])
		if st.rows*st.cols != vh*dim*dim {
			panic(fmt.Sprintf("cuda: GatedDeltaNet state of %d values, want %d", st.rows*st.cols, vh*dim*dim))
		}
		a := newArgs(13).ptr(out.p).ptr(qkv.p).ptr(alpha.p).ptr(beta.p).ptr(st.p).ptr(vec(d.DtBias)).ptr(vec(d.A)).
			i32(sp.Row).i32(sp.N).i32(kh).i32(vh).i32(dim).i32(grouped)
		b.must(func() error { return b.d.launch("hx_delta_net", [3]int{vh, 1, 1}, 128, a) })
	}
}

// SplitHeads implements compute.Backend.
func (b *Backend) SplitHeads(srcT compute.Tensor, heads, a int, dstAT, dstBT compute.Tensor) {
	src, da, db := dev(srcT), dev(dstAT), dev(dstBT)
	g := src.cols / heads
	bw := g - a
	if g*heads != src.cols || da.cols != heads*a || db.cols != heads*bw {
		panic(fmt.Sprintf("cuda: SplitHeads of %d columns into %d heads of %d + %d", src.cols, heads, a, bw))
	}
	n := src.rows * src.cols
	b.elementwise("hx_split_heads", n, newArgs(7).ptr(da.p).ptr(db.p).ptr(src.p).i32(src.rows).i32(heads).i32(a).i32(bw))
}

// SigmoidMul implements compute.Backend.
func (b *Backend) SigmoidMul(xT, gateT compute.Tensor) {
	x, g := dev(xT), dev(gateT)
	if g.rows != x.rows || (g.cols != x.cols && g.cols != 1) {
		panic(fmt.Sprintf("cuda: SigmoidMul of %d × %d by %d × %d", x.rows, x.cols, g.rows, g.cols))
	}
	n := x.rows * x.cols
	b.elementwise("hx_sigmoid_mul", n, newArgs(5).ptr(x.p).ptr(g.p).i32(n).i32(x.cols).i32(g.cols))
}

// Zero implements compute.Backend.
func (b *Backend) Zero(t compute.Tensor) {
	x := dev(t)
	b.must(func() error { return b.d.zero(x.p, int64(x.rows*x.cols)*4) })
}

// Copy implements compute.Backend.
func (b *Backend) Copy(dstT, srcT compute.Tensor) {
	dst, src := dev(dstT), dev(srcT)
	if dst.rows*dst.cols != src.rows*src.cols {
		panic(fmt.Sprintf("cuda: Copy of %d values into %d", src.rows*src.cols, dst.rows*dst.cols))
	}
	b.must(func() error { return b.d.copyD(dst.p, src.p, int64(src.rows*src.cols)*4) })
}
