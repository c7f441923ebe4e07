package cuda

import (
	"fmt"
	"os"
	"slices"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute"
)

// Embed implements compute.Backend: the rows are decoded on the device
// from the prepared table (the same decoders as the matmuls'), exactly as
// the CPU decodes them (F16 for the types converted at load).
func (b *Backend) Embed(table *compute.Weight, tokens []int32, outT compute.Tensor) error {
	o, n := dev(outT), table.Cols()
	if o.rows*o.cols < len(tokens)*n {
		return fmt.Errorf("embed: output of %d values for %d tokens × %d", o.rows*o.cols, len(tokens), n)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= table.Rows() {
			return fmt.Errorf("embed: token %d out of range [0, %d)", t, table.Rows())
		}
	}
	wp, f, err := b.lookup(table)
	if err != nil {
		return err
	}
	if len(tokens) == 0 {
		return nil
	}
	return b.d.do(func() error {
		if err := b.maybeFault(); err != nil {
			return err
		}
		ids, err := b.putInts(0, tokens)
		if err != nil {
			return err
		}
		a := newArgs(5).ptr(o.p).ptr(wp).ptr(ids).i32(len(tokens)).i32(n)
		return b.d.launch(f.rowsKernel(), [3]int{len(tokens), 1, 1}, threads, a)
	})
}

// maybeFault is the test hook of HELEXA_CUDA_FAULT: when the file it names
// exists, the file is removed and a trapping kernel makes a real, sticky
// device failure (reported by the next synchronising call).
func (b *Backend) maybeFault() error {
	if b.fault == "" {
		return nil
	}
	if err := os.Remove(b.fault); err != nil {
		return nil // no file: no fault
	}
	return b.d.launch("hx_trap", [3]int{1, 1, 1}, 1, newArgs(0))
}

// gemm runs out = x·Wᵀ through cuBLAS (on the owner goroutine), x being
// the activations already rounded as the CPU quantizes them for w's type
// (round, actRound): F32 weights with F32 activations; a quantized weight
// in its own layout dequantized to F32 (exact) with F32 activations, so
// that the products are the CPU's; the others (F16, or converted to F16 at
// load) as F16 with the activations converted.
func (b *Backend) gemm(w *compute.Weight, wp devPtr, f format, x, out *tensor, round string) error {
	rows, cols, n := w.Rows(), w.Cols(), x.rows
	g := b.d.gemmer()
	if f.suffix == "f32" {
		return g.gemmF32(wp, x.p, out.p, rows, cols, n, rows)
	}
	if round != "" && f.dqKernel() != "" {
		return b.gemmExact(w, wp, f, x, out)
	}
	x16, err := b.f16x.ensure(b.d, int64(n)*int64(cols)*2)
	if err != nil {
		return err
	}
	if err := b.d.launch("hx_f32_to_f16", [3]int{grid1D(n * cols), 1, 1}, threads,
		newArgs(3).ptr(x16).ptr(x.p).i32(n*cols)); err != nil {
		return err
	}
	return g.gemmF16(wp, x16, out.p, rows, cols, n, rows)
}

// gemmExactBytes bounds the F32 copy of a weight gemmExact makes: larger
// weights (a big vocabulary's output matrix) go in blocks of rows.
const gemmExactBytes = 128 << 20

// gemmExact multiplies a quantized weight, dequantized to F32 a block of
// rows at a time, with F32 activations (F32 accumulation, no TF32).
func (b *Backend) gemmExact(w *compute.Weight, wp devPtr, f format, x, out *tensor) error {
	rows, cols := w.Rows(), w.Cols()
	per := max(1, min(rows, gemmExactBytes/(cols*4)))
	p, err := b.f32w.ensure(b.d, int64(per)*int64(cols)*4)
	if err != nil {
		return err
	}
	rb := devPtr(w.RowBytes())
	for r0 := 0; r0 < rows; r0 += per {
		m := min(per, rows-r0)
		a := newArgs(4).ptr(p).ptr(wp + devPtr(r0)*rb).i32(m).i32(cols)
		if err := b.d.launch(f.dqKernel(), [3]int{m, 1, 1}, threads, a); err != nil {
			return err
		}
		if err := b.d.gemmer().gemmF32(p, x.p, out.p+devPtr(r0*4), m, cols, x.rows, rows); err != nil {
			return err
		}
	}
	return nil
}

// elementwise launches an element-wise kernel over n elements.
func (b *Backend) elementwise(name string, n int, a *args) {
	b.must(func() error { return b.d.launch(name, [3]int{grid1D(n), 1, 1}, threads, a) })
}

// RMSNorm implements compute.Backend (hx_rmsnorm, or hx_rmsnorm_q8k,
// which also rounds the output, when the products after the last norm
// asked for hx_round_q8k: see preRounded).
func (b *Backend) RMSNorm(xT compute.Tensor, weight *compute.Vector, eps float32, outT compute.Tensor) {
	x, out := dev(xT), dev(outT)
	cols := len(weight.Data)
	rows := x.rows * x.cols / cols
	b.must(func() error {
		return b.norm.launch(b, out, rows, cols, "hx_rmsnorm", "hx_rmsnorm_q8k", func(a *args) *args {
			return a.ptr(x.p).ptr(vec(weight)).i32(cols).f32(eps)
		})
	})
}

// RoPE implements compute.Backend (hx_rope).
func (b *Backend) RoPE(xT compute.Tensor, pos []int32, heads, headDim int, r *compute.Rope) {
	x := dev(xT)
	b.must(func() error {
		pp, ff, neox, err := b.ropeInputs(pos, r)
		if err != nil {
			return err
		}
		a := newArgs(10).ptr(x.p).ptr(pp).i32(len(pos)).i32(heads).
			i32(headDim).i32(r.Dims).f32(r.Base).f32(r.FreqScale).ptr(ff).i32(neox)
		return b.d.launch("hx_rope", [3]int{grid1D(len(pos) * heads * (r.Dims / 2)), 1, 1}, threads, a)
	})
}

// ropeInputs uploads the positions of a RoPE launch and finds its
// frequency factors (0 for none) and its neox flag (on the owner
// goroutine).
func (b *Backend) ropeInputs(pos []int32, r *compute.Rope) (pp, ff devPtr, neox int, err error) {
	if r.Mode == compute.RopeNeox {
		neox = 1
	}
	if pp, err = b.putInts(0, pos); err != nil {
		return 0, 0, 0, err
	}
	ff, err = b.freqFactors(r.FreqFactors)
	return pp, ff, neox, err
}

// freqFactors returns the device copy of a model's RoPE frequency
// factors (uploaded once; 0 for none).
func (b *Backend) freqFactors(ff []float32) (devPtr, error) {
	if len(ff) == 0 {
		return 0, nil
	}
	if p, ok := b.factors[&ff[0]]; ok {
		return p, nil
	}
	p, err := b.d.alloc(int64(len(ff)) * 4)
	if err != nil {
		return 0, err
	}
	if err := b.d.upload(p, unsafe.Pointer(&ff[0]), int64(len(ff))*4); err != nil {
		return 0, err
	}
	b.factors[&ff[0]] = p
	return p, nil
}

// StoreKV implements compute.Backend.
func (b *Backend) StoreKV(kvs compute.KV, layer int, spans []compute.SeqSpan, kT, vT compute.Tensor) {
	kv, k, v := kvOf(kvs), dev(kT), dev(vT)
	name := "hx_store_kv_" + kv.suffix()
	b.must(func() error {
		e, err := b.plans.get(b.d, kv.KVShape, spans, 0, true)
		if err != nil {
			return err
		}
		rows := e.rows
		a := newArgs(7).ptr(kv.k[layer]).ptr(kv.v[layer]).ptr(k.p).ptr(v.p).
			ptr(e.ptr[0]).i32(rows).i32(kv.KVDim)
		return b.d.launch(name, [3]int{grid1D(rows * kv.KVDim), 1, 1}, threads, a)
	})
}

// Attention implements compute.Backend.
func (b *Backend) Attention(kvs compute.KV, layer int, spans []compute.SeqSpan, at *compute.Attn, q, out compute.Tensor) {
	b.attention(kvs, layer, spans, at, 0, q, out)
}

// AttentionWindow implements compute.Backend.
func (b *Backend) AttentionWindow(kvs compute.KV, layer int, spans []compute.SeqSpan, at *compute.Attn, window int, q, out compute.Tensor) {
	if window <= 0 {
		panic("cuda: AttentionWindow with a window of no positions")
	}
	b.attention(kvs, layer, spans, at, window, q, out)
}

func (b *Backend) attention(kvs compute.KV, layer int, spans []compute.SeqSpan, at *compute.Attn, window int, qT, outT compute.Tensor) {
	kv, q, out := kvOf(kvs), dev(qT), dev(outT)
	suffix := kv.suffix()
	chunk, splits := planSplits(spans, window, q.rows*at.Heads)
	b.must(func() error {
		e, err := b.plans.get(b.d, kv.KVShape, spans, window, false)
		if err != nil {
			return err
		}
		// the kernels' parameters from q to scale; the split kernel's
		// come after its output, partial results and counts
		shared := func(a *args) *args {
			return a.ptr(q.p).ptr(kv.k[layer]).ptr(kv.v[layer]).ptr(e.ptr[1]).ptr(e.ptr[2]).ptr(e.ptr[3]).ptr(e.ptr[4]).
				i32(at.Heads).i32(at.KVHeads).i32(at.HeadDim).i32(kv.BlockSize).f32(at.Scale)
		}
		if splits == 1 {
			return b.d.launch("hx_attention_"+suffix, [3]int{e.rows, at.Heads, 1}, 128, shared(newArgs(13).ptr(out.p)))
		}
		part, err := b.attnPart.ensure(b.d, int64(e.rows*at.Heads*splits*(at.HeadDim+2))*4)
		if err != nil {
			return err
		}
		counts, err := b.attnCount.ensure(b.d, int64(e.rows*at.Heads)*4) // zeros, left zero by every launch
		if err != nil {
			return err
		}
		a := shared(newArgs(17).ptr(out.p).ptr(part).ptr(counts)).i32(chunk).i32(splits)
		return b.d.launch("hx_attention_part_"+suffix, [3]int{e.rows, at.Heads, splits}, 128, a)
	})
}

// planEntry is a kvPlan uploaded to the device: slot, pos, first, table,
// tables.
type planEntry struct {
	key  []int32
	rows int
	bufs [5]devBuf
	ptr  [5]devPtr
}

// planCache keeps the last few uploaded plans (a pass alternates at most
// between a store plan and an attention plan per KV store).
type planCache struct {
	entries []*planEntry
}

const planCacheSize = 4

// get returns the uploaded plan of spans, planning and uploading it
// unless the same spans were planned last (on the owner goroutine).
func (c *planCache) get(d driver, s compute.KVShape, spans []compute.SeqSpan, window int, store bool) (*planEntry, error) {
	key := planKey(spans, window, store)
	for i, e := range c.entries {
		if slices.Equal(e.key, key) {
			c.entries = append(append([]*planEntry{e}, c.entries[:i]...), c.entries[i+1:]...)
			return e, nil
		}
	}
	p, err := planKV(s, spans, window, store)
	if err != nil {
		return nil, err
	}
	var e *planEntry
	if len(c.entries) == planCacheSize {
		e = c.entries[planCacheSize-1]
		c.entries = c.entries[:planCacheSize-1]
	} else {
		e = &planEntry{}
	}
	e.key, e.rows = key, p.rows()
	for i, vals := range [][]int32{p.slot, p.pos, p.first, p.table, p.tables} {
		e.ptr[i] = 0
		if len(vals) == 0 {
			continue
		}
		ptr, err := e.bufs[i].ensure(d, int64(len(vals))*4)
		if err != nil {
			e.key = nil
			return nil, err
		}
		if err := d.upload(ptr, unsafe.Pointer(&vals[0]), int64(len(vals))*4); err != nil {
			e.key = nil
			return nil, err
		}
		e.ptr[i] = ptr
	}
	c.entries = append([]*planEntry{e}, c.entries...)
	return e, nil
}

// SwiGLU implements compute.Backend.
func (b *Backend) SwiGLU(gate, up, out compute.Tensor) {
	o := dev(out)
	n := o.rows * o.cols
	b.elementwise("hx_swiglu", n, newArgs(4).ptr(o.p).ptr(dev(gate).p).ptr(dev(up).p).i32(n))
}

// GeGLU implements compute.Backend.
func (b *Backend) GeGLU(gate, up, out compute.Tensor) {
	o := dev(out)
	n := o.rows * o.cols
	b.elementwise("hx_geglu", n, newArgs(4).ptr(o.p).ptr(dev(gate).p).ptr(dev(up).p).i32(n))
}

// Softcap implements compute.Backend.
func (b *Backend) Softcap(t compute.Tensor, c float32) {
	x := dev(t)
	n := x.rows * x.cols
	b.elementwise("hx_softcap", n, newArgs(3).ptr(x.p).i32(n).f32(c))
}

// Add implements compute.Backend.
func (b *Backend) Add(dst, src compute.Tensor) {
	d := dev(dst)
	n := d.rows * d.cols
	b.elementwise("hx_add", n, newArgs(3).ptr(d.p).ptr(dev(src).p).i32(n))
}

// AddRow implements compute.Backend.
func (b *Backend) AddRow(xT compute.Tensor, bias *compute.Vector) {
	x := dev(xT)
	cols := len(bias.Data)
	rows := x.rows * x.cols / cols
	b.elementwise("hx_add_row", rows*cols, newArgs(4).ptr(x.p).ptr(vec(bias)).i32(rows).i32(cols))
}

// GatherRows implements compute.Backend.
func (b *Backend) GatherRows(srcT compute.Tensor, rows []int32, dstT compute.Tensor) {
	src, dst := dev(srcT), dev(dstT)
	cols := src.cols
	b.must(func() error {
		p, err := b.putInts(1, rows)
		if err != nil {
			return err
		}
		a := newArgs(5).ptr(dst.p).ptr(src.p).ptr(p).i32(len(rows)).i32(cols)
		return b.d.launch("hx_gather_rows", [3]int{grid1D(len(rows) * cols), 1, 1}, threads, a)
	})
}

// ScaleRowsTo implements compute.Backend.
func (b *Backend) ScaleRowsTo(srcT compute.Tensor, to []int32, scale []float32, dstT compute.Tensor) {
	src, dst := dev(srcT), dev(dstT)
	cols := src.cols
	b.must(func() error {
		tp, err := b.putInts(2, to)
		if err != nil {
			return err
		}
		sp, err := b.putFloats(3, scale[:len(to)])
		if err != nil {
			return err
		}
		a := newArgs(6).ptr(dst.p).ptr(src.p).ptr(tp).ptr(sp).i32(len(to)).i32(cols)
		return b.d.launch("hx_scale_rows_to", [3]int{grid1D(len(to) * cols), 1, 1}, threads, a)
	})
}

// SumRowGroups implements compute.Backend.
func (b *Backend) SumRowGroups(srcT compute.Tensor, k int, outT compute.Tensor) {
	src, out := dev(srcT), dev(outT)
	rows, cols := out.rows, out.cols
	b.elementwise("hx_sum_row_groups", rows*cols, newArgs(5).ptr(out.p).ptr(src.p).i32(k).i32(rows).i32(cols))
}

// MoERoute implements compute.Backend: the router logits come to the host
// (the choices must anyway), are routed there, and the probabilities go
// back.
func (b *Backend) MoERoute(logitsT compute.Tensor, k int, probsT compute.Tensor, experts []int32, weights []float32) {
	l, p := dev(logitsT), dev(probsT)
	n := l.rows * l.cols
	if cap(b.route) < 2*n {
		b.route = make([]float32, 2*n)
	}
	logits, probs := b.route[:n], b.route[n:2*n]
	b.must(func() error {
		return b.d.download(unsafe.Pointer(&logits[0]), l.p, int64(n)*4)
	})
	compute.RouteRows(logits, l.cols, k, probs, experts, weights)
	b.must(func() error { return b.d.upload(p.p, unsafe.Pointer(&probs[0]), int64(n)*4) })
}
