package cpu

import (
	"fmt"
	"math"

	"github.com/helexa/helexa/pkg/compute"
)

// ConvSiLU implements compute.Backend.
func (c *Backend) ConvSiLU(xT compute.Tensor, spans []compute.SeqSpan, states []compute.Tensor, w *compute.Vector, outT compute.Tensor) {
	x, out := host(xT), host(outT)
	ch := xT.Cols()
	if len(w.Data)%ch != 0 || len(states) != len(spans) {
		panic(fmt.Sprintf("cpu: ConvSiLU of %d channels with %d taps and %d states for %d spans", ch, len(w.Data), len(states), len(spans)))
	}
	k := len(w.Data) / ch
	for i, sp := range spans {
		st := host(states[i])
		if len(st) != (k-1)*ch {
			panic(fmt.Sprintf("cpu: ConvSiLU state of %d values, want %d", len(st), (k-1)*ch))
		}
		xs, os := x[sp.Row*ch:(sp.Row+sp.N)*ch], out[sp.Row*ch:(sp.Row+sp.N)*ch]
		c.pool.parallelFor(ch, max(16, grain(sp.N*k)), func(lo, hi int) {
			if c.vec == vecAVX512 && k > 1 {
				convSiLUVec(xs, st, w.Data, os, ch, k, lo, hi)
				return
			}
			convRange(xs, st, w.Data, os, ch, k, lo, hi)
		})
		shiftState(st, xs, ch, k-1)
	}
}

// convRange convolves channels [lo, hi) of one span, summing taps oldest
// first from zero as ggml's ssm_conv does.
func convRange(x, st, w, out []float32, ch, k, lo, hi int) {
	n := len(x) / ch
	for t := 0; t < n; t++ {
		for c := lo; c < hi; c++ {
			var sum float32
			for j := 0; j < k; j++ {
				src := t - (k - 1) + j // input time, negative: from the state
				var v float32
				if src < 0 {
					v = st[(k-1+src)*ch+c]
				} else {
					v = x[src*ch+c]
				}
				sum += v * w[j*ch+c]
			}
			out[t*ch+c] = silu(sum)
		}
	}
}

// shiftState leaves in st the last keep rows of the sequence st ++ x.
func shiftState(st, x []float32, ch, keep int) {
	n := len(x) / ch
	if n >= keep {
		copy(st, x[(n-keep)*ch:])
		return
	}
	copy(st, st[n*ch:])
	copy(st[(keep-n)*ch:], x)
}

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

func sigmoid(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }

// softplus is ggml's: log(1 + e^x), x itself above 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(1 + math.Exp(float64(x))))
}

// GatedDeltaNet implements compute.Backend. Each state row depends only
// on its own past, so the work is cut into blocks of rows of one head of
// one span, each advanced over all the span's tokens at once.
func (c *Backend) GatedDeltaNet(qkvT, alphaT, betaT compute.Tensor, spans []compute.SeqSpan, states []compute.Tensor, d *compute.DeltaNet, outT compute.Tensor) {
	qkv, alpha, beta, out := host(qkvT), host(alphaT), host(betaT), host(outT)
	dim, kh, vh := d.Dim, d.KHeads, d.VHeads
	width, rows := (2*kh+vh)*dim, qkvT.Rows()
	if qkvT.Cols() != width || outT.Cols() != vh*dim || alphaT.Cols() != vh || betaT.Cols() != vh || len(states) != len(spans) {
		panic(fmt.Sprintf("cpu: GatedDeltaNet shapes qkv %d, alpha %d, beta %d, out %d, %d states for %d spans (heads %d/%d × %d)",
			qkvT.Cols(), alphaT.Cols(), betaT.Cols(), outT.Cols(), len(states), len(spans), kh, vh, dim))
	}
	for i := range states {
		if n := len(host(states[i])); n != vh*dim*dim {
			panic(fmt.Sprintf("cpu: GatedDeltaNet state of %d values, want %d", n, vh*dim*dim))
		}
	}
	c.pool.parallelFor(rows*2*kh, grain(dim), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r, h := i/(2*kh), i%(2*kh)
			l2Normalise(qkv[r*width+h*dim:r*width+(h+1)*dim], d.Eps)
		}
	})
	// decay and beta of every token, head after head
	decay, bet := growF32(&c.decay, rows*vh), growF32(&c.beta, rows*vh)
	for r := 0; r < rows; r++ {
		for h := 0; h < vh; h++ {
			decay[h*rows+r] = float32(math.Exp(float64(softplus(alpha[r*vh+h]+d.DtBias.Data[h]) * d.A.Data[h])))
			bet[h*rows+r] = sigmoid(beta[r*vh+h])
		}
	}
	const block = 16
	nb := (dim + block - 1) / block
	vec := c.vec == vecAVX512 && vectorDelta(dim)
	scale := 1 / float32(math.Sqrt(float64(dim)))
	c.pool.parallelFor(len(spans)*vh*nb, 1, func(lo, hi int) {
		for it := lo; it < hi; it++ {
			si, h, b := it/(vh*nb), it/nb%vh, it%nb
			sp := spans[si]
			s := host(states[si])[h*dim*dim : (h+1)*dim*dim]
			j0, j1 := b*block, min(dim, (b+1)*block)
			base := sp.Row * width
			kq := d.KeyHead(h)
			q, k, v := qkv[base+kq*dim:], qkv[base+(kh+kq)*dim:], qkv[base+(2*kh+h)*dim:]
			dec, bt := decay[h*rows+sp.Row:h*rows+sp.Row+sp.N], bet[h*rows+sp.Row:h*rows+sp.Row+sp.N]
			o := out[sp.Row*vh*dim+h*dim:]
			if vec {
				deltaRowsVec(s, dim, j0, j1, sp.N, q, k, v, width, dec, bt, o, vh*dim, scale)
			} else {
				deltaRows(s, dim, j0, j1, sp.N, q, k, v, width, dec, bt, o, vh*dim, scale)
			}
		}
	})
}

// deltaRows advances rows [j0, j1) of one head's state s over n tokens
// (the portable kernel, oracle of the vector one): token t reads q and k
// at t·stride, v[t·stride+j], decay[t] and beta[t] and writes
// out[t·ostride+j].
func deltaRows(s []float32, dim, j0, j1, n int, q, k, v []float32, stride int, decay, beta, out []float32, ostride int, scale float32) {
	for j := j0; j < j1; j++ {
		row := s[j*dim : (j+1)*dim]
		for t := 0; t < n; t++ {
			qt, kt := q[t*stride:t*stride+dim], k[t*stride:t*stride+dim]
			var sk float32
			for i := range row {
				row[i] *= decay[t]
				sk += row[i] * kt[i]
			}
			dj := (v[t*stride+j] - sk) * beta[t]
			var o float32
			for i := range row {
				row[i] += dj * kt[i]
				o += row[i] * qt[i]
			}
			out[t*ostride+j] = o * scale
		}
	}
}

// l2Normalise divides x by max(|x|, eps), as ggml's l2_norm does.
func l2Normalise(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	scale := 1 / max(float32(math.Sqrt(sum)), eps)
	for i := range x {
		x[i] *= scale
	}
}

// SplitHeads implements compute.Backend.
func (c *Backend) SplitHeads(srcT compute.Tensor, heads, a int, dstAT, dstBT compute.Tensor) {
	src, da, db := host(srcT), host(dstAT), host(dstBT)
	g := srcT.Cols() / heads
	b := g - a
	if g*heads != srcT.Cols() || dstAT.Cols() != heads*a || dstBT.Cols() != heads*b {
		panic(fmt.Sprintf("cpu: SplitHeads of %d columns into %d heads of %d + %d", srcT.Cols(), heads, a, b))
	}
	for r := 0; r < srcT.Rows(); r++ {
		for h := 0; h < heads; h++ {
			grp := src[(r*heads+h)*g : (r*heads+h+1)*g]
			copy(da[(r*heads+h)*a:], grp[:a])
			copy(db[(r*heads+h)*b:], grp[a:])
		}
	}
}

// SigmoidMul implements compute.Backend.
func (c *Backend) SigmoidMul(xT, gateT compute.Tensor) {
	x, g := host(xT), host(gateT)
	if gateT.Rows() != xT.Rows() || (gateT.Cols() != xT.Cols() && gateT.Cols() != 1) {
		panic(fmt.Sprintf("cpu: SigmoidMul of %d × %d by %d × %d", xT.Rows(), xT.Cols(), gateT.Rows(), gateT.Cols()))
	}
	if gateT.Cols() == 1 && xT.Cols() != 1 {
		n := xT.Cols()
		for r, gv := range g {
			s := sigmoid(gv)
			for i := r * n; i < (r+1)*n; i++ {
				x[i] *= s
			}
		}
		return
	}
	c.pool.parallelFor(len(x), grain(1), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] *= sigmoid(g[i])
		}
	})
}

// Zero implements compute.Backend.
func (c *Backend) Zero(t compute.Tensor) { clear(host(t)) }

// Copy implements compute.Backend.
func (c *Backend) Copy(dstT, srcT compute.Tensor) {
	dst, src := host(dstT), host(srcT)
	if len(dst) != len(src) {
		panic(fmt.Sprintf("cpu: Copy of %d values into %d", len(src), len(dst)))
	}
	copy(dst, src)
}

// growF32 returns (*buf)[:n], growing the buffer when needed.
func growF32(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}
