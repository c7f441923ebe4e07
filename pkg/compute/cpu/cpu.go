package cpu

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// CPU is the Backend that runs on the host's cores. Weights stay quantized
// in place; activations are quantized once per row to the weight's dot
// product type (as ggml-cpu does) before each matmul.
type Backend struct {
	pool    *pool
	xq      []byte          // quantized activations, reused between matmuls
	xqSpan  [][2]int        // each input's bytes in xq (MatMulPairs)
	reducer compute.Reducer // tensor-parallel sums (nil on one rank)
	vec     vecISA          // which C vector kernels attention, SwiGLU, RMSNorm, RoPE and Add run
	decay   []float32       // the delta rule's per-token decays, reused
	beta    []float32       // and betas
	kv16    []uint16        // StoreKV's rows rounded to F16, reused
	floats  scratch         // the parallel loops' per-task buffers, reused
	// packGrowth is the packed weights' bytes beyond the file's (Prepare)
	packGrowth atomic.Int64
	ropes      [2]*ropeTable // RoPE's last angle tables, the latest first
	// gatedW and gatedOut are GatedMatMul's operands of MatMuls, reused.
	gatedW   [2]*compute.Weight
	gatedOut [2]compute.Tensor
}

// vecISA is which build of the C vector kernels (attention, SwiGLU, F16
// conversion) a CPU backend runs: none (the Go kernels), AVX2+FMA or
// AVX-512. Its values are the isa argument of attn.h's kernels.
type vecISA int

const (
	vecNone vecISA = iota
	vecAVX2
	vecAVX512
)

// New returns a CPU backend using threads workers (all cores when
// threads <= 0).
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return &Backend{pool: newPool(threads), vec: vectorAttention(), floats: newScratch(threads)}
}

// Threads is the number of workers.
func (c *Backend) Threads() int { return c.pool.workers }

// Close stops the workers.
func (c *Backend) Close() error {
	c.pool.close()
	return nil
}

// minParallelWork is roughly how many multiply-adds a chunk of a parallel
// loop must do to be worth waking another worker for.
const minParallelWork = 1 << 15

// grain returns the smallest chunk of a parallel loop whose items cost
// about perItem multiply-adds each.
func grain(perItem int) int { return max(1, minParallelWork/max(1, perItem)) }

// Embed implements compute.Backend.
func (c *Backend) Embed(table *compute.Weight, tokens []int32, outT compute.Tensor) error {
	out, n := host(outT), table.Cols()
	if len(out) < len(tokens)*n {
		return fmt.Errorf("embed: output of %d values for %d tokens × %d", len(out), len(tokens), n)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= table.Rows() {
			return fmt.Errorf("embed: token %d out of range [0, %d)", t, table.Rows())
		}
		if err := quant.Dequantize(table.Type, table.Row(int(t)), out[i*n:(i+1)*n]); err != nil {
			return fmt.Errorf("embed %s: %w", table.Name, err)
		}
	}
	return nil
}

// MatMul implements compute.Backend. Workers take ranges of weight rows; each range
// is one quant.VecDotRowsMulti call over every activation row, over tiles
// of weights small enough to stay in cache while the activation rows pass
// over them (each weight block is decoded once per group of activation
// rows).
func (c *Backend) MatMul(w *compute.Weight, xT, outT compute.Tensor) error {
	if err := matMulShape(w, xT, outT); err != nil {
		return err
	}
	return c.matMul(w, host(xT), xT.Rows(), host(outT))
}

// matMulShape checks that x (rows × w's inputs) times w fits out (rows ×
// w's outputs).
func matMulShape(w *compute.Weight, xT, outT compute.Tensor) error {
	if xT.Cols() != w.Cols() || outT.Cols() != w.Rows() || outT.Rows() != xT.Rows() {
		return fmt.Errorf("matmul %s (%d → %d): input %d × %d, output %d × %d", w.Name, w.Cols(), w.Rows(),
			xT.Rows(), xT.Cols(), outT.Rows(), outT.Cols())
	}
	return nil
}

// matMul is MatMul over host slices: x is nRows × w.Cols(), out nRows ×
// w.Rows().
func (c *Backend) matMul(w *compute.Weight, x []float32, nRows int, out []float32) error {
	n, m := w.Cols(), w.Rows()
	if nRows <= 0 {
		if nRows < 0 {
			return fmt.Errorf("matmul %s: negative row count %d", w.Name, nRows)
		}
		return nil
	}
	if len(x) < nRows*n || len(out) < nRows*m {
		return fmt.Errorf("matmul %s: %d inputs / %d outputs for %d rows of %d→%d", w.Name, len(x), len(out), nRows, n, m)
	}
	xq, ab, err := c.quantizeRows(w, x, nRows)
	if err != nil {
		return err
	}
	var fail firstError
	u := rowUnit(w)
	c.pool.parallelFor(m/u, matMulChunk(n, nRows, u, w.RowBytes()), func(lo, hi int) {
		fail.set(matMulRange(w, xq, ab, nRows, out, lo*u, hi*u))
	})
	if fail.err != nil {
		return fmt.Errorf("matmul %s: %w", w.Name, fail.err)
	}
	return nil
}

// minChunkBytes is the fewest weight bytes a worker's chunk of a matmul
// streams. A parallel loop's chunks shrink as it drains (pool.parallelFor);
// below this a chunk's start (a cgo call, the activation sums, the
// prefetches not yet ahead) costs more than finer balancing gains. 32, 64
// and 128 KB decoded alike; 16-row chunks (9 KB of a Q4_K row group) were
// 3–4 % slower on Qwen3-0.6B.
const minChunkBytes = 64 << 10

// matMulChunk is the smallest range of a matmul, in units of u rows of
// rowBytes (n-wide, times nRows activation rows), that parallelFor hands
// one worker.
func matMulChunk(n, nRows, u, rowBytes int) int {
	return max(max(8, grain(n*nRows))/u, (minChunkBytes+u*rowBytes-1)/(u*rowBytes)) // the second is at least 1
}

// quantizeRows quantizes nRows activation rows of x for weight w's vector
// dot product into the reused buffer, returning it and the bytes per row.
func (c *Backend) quantizeRows(w *compute.Weight, x []float32, nRows int) ([]byte, int, error) {
	ab := quant.ActivationBytes(w.Type, w.Cols())
	if cap(c.xq) < nRows*ab {
		c.xq = make([]byte, nRows*ab)
	}
	xq := c.xq[:nRows*ab]
	if err := c.quantizeTo(w, x, nRows, xq); err != nil {
		return nil, 0, err
	}
	return xq, ab, nil
}

// quantizeTo quantizes nRows activation rows of x for weight w's vector
// dot product into xq (nRows times the bytes of one).
func (c *Backend) quantizeTo(w *compute.Weight, x []float32, nRows int, xq []byte) error {
	n := w.Cols()
	ab := quant.ActivationBytes(w.Type, n)
	if err := quant.QuantizeActivations(w.Type, x[:n], xq[:ab]); err != nil {
		return fmt.Errorf("matmul %s: %w", w.Name, err)
	}
	// the first row succeeded, so the shape is valid for every row
	c.pool.parallelFor(nRows-1, grain(n), func(lo, hi int) {
		for r := lo + 1; r < hi+1; r++ {
			_ = quant.QuantizeActivations(w.Type, x[r*n:(r+1)*n], xq[r*ab:(r+1)*ab])
		}
	})
	return nil
}

// matMulTileBytes bounds the weight bytes of one tile of a batched matmul
// (about half of a typical L2 cache).
const matMulTileBytes = 256 << 10

// callBytes bounds the weight bytes times activation rows of one kernel
// call in a product of fewer than callRowsMax activation rows (decode and
// batched decode): about 10 µs of streaming. Go's sysmon takes the P of a
// goroutine it finds in the same cgo call on two of its ticks (20 µs apart
// while it finds work) and starts a thread to run it, which on a machine
// with as many cores as workers preempts a worker. Whole chunks in one
// call (up to a quarter of a product, hundreds of microseconds) did that
// on most calls: a 256-token Llama-3.2-1B Q4_K_M decode switched context
// 240–330 K times against 70–100 K, and decoded 5–13 % slower. 128 KB
// calls were slower again, 512 KB ones the same.
const (
	callBytes   = 256 << 10
	callRowsMax = 32
)

// matMulRange computes out[r*m+i] for weight rows i in [lo, hi) and every
// activation row r, in calls of at most callBytes (times activation rows)
// at multiples of their size.
func matMulRange(w *compute.Weight, xq []byte, ab, nRows int, out []float32, lo, hi int) error {
	if nRows >= callRowsMax {
		return matMulCall(w, xq, ab, nRows, out, lo, hi)
	}
	step := max(1, callBytes/(nRows*w.RowBytes()*quant.PackRows)) * quant.PackRows
	for a := lo; a < hi; {
		b := min(hi, (a/step+1)*step)
		if err := matMulCall(w, xq, ab, nRows, out, a, b); err != nil {
			return err
		}
		a = b
	}
	return nil
}

// matMulCall is matMulRange in one kernel call (three where the range's
// edges are not whole packed groups).
func matMulCall(w *compute.Weight, xq []byte, ab, nRows int, out []float32, lo, hi int) error {
	m := w.Rows()
	if p := w.Packed(); p != nil {
		// whole groups from the packed copy; a range that is not (beside a
		// weight whose rows are not) takes its edge rows from the file
		a, b := min(hi, (lo+quant.PackRows-1)/quant.PackRows*quant.PackRows), max(lo, hi/quant.PackRows*quant.PackRows)
		if a < b {
			if err := p.MulRows(a/quant.PackRows, b/quant.PackRows, xq, ab, nRows, out[a:], m); err != nil {
				return err
			}
			if err := fileRows(w, xq, ab, nRows, out, lo, a); err != nil {
				return err
			}
			return fileRows(w, xq, ab, nRows, out, b, hi)
		}
	}
	return fileRows(w, xq, ab, nRows, out, lo, hi)
}

// fileRows is matMulRange on the weight's bytes as the file has them.
func fileRows(w *compute.Weight, xq []byte, ab, nRows int, out []float32, lo, hi int) error {
	if lo >= hi {
		return nil
	}
	n, m, rb := w.Cols(), w.Rows(), w.RowBytes()
	tile := hi - lo
	if nRows > 1 {
		tile = max(1, matMulTileBytes/rb)
	}
	for t0 := lo; t0 < hi; t0 += tile {
		t1 := min(hi, t0+tile)
		if err := quant.VecDotRowsMulti(w.Type, w.Data[t0*rb:t1*rb], rb, t1-t0, xq, ab, nRows, n, out[t0:], m); err != nil {
			return err
		}
	}
	return nil
}

// firstError keeps the first error reported by parallel workers.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// RMSNorm implements compute.Backend, as ggml does: the sum of squares in float64,
// scale = 1/sqrt(mean + eps) in float32, then x*scale*weight.
func (c *Backend) RMSNorm(xT compute.Tensor, weightV *compute.Vector, eps float32, outT compute.Tensor) {
	x, out, weight := host(xT), host(outT), weightV.Data
	n := len(weight)
	nRows := len(x) / n
	c.pool.parallelFor(nRows, grain(n), func(lo, hi int) {
		if c.vec != vecNone {
			rmsNormVec(x[lo*n:hi*n], out[lo*n:hi*n], weight, hi-lo, n, eps)
			return
		}
		r := lo
		// four rows at a time: each row's sum is still taken in order (as
		// ggml's, in float64), but four of them are in flight, where one
		// waited on the latency of every addition
		for ; r+4 <= hi; r += 4 {
			s := sumSquares4(x[r*n:(r+1)*n], x[(r+1)*n:(r+2)*n], x[(r+2)*n:(r+3)*n], x[(r+3)*n:(r+4)*n])
			for k := range 4 {
				normRow(x[(r+k)*n:(r+k+1)*n], out[(r+k)*n:(r+k+1)*n], weight, s[k], eps)
			}
		}
		for ; r < hi; r++ {
			var sum float64
			for _, v := range x[r*n : (r+1)*n] {
				sum += float64(v * v)
			}
			normRow(x[r*n:(r+1)*n], out[r*n:(r+1)*n], weight, sum, eps)
		}
	})
}

// sumSquares4 returns each row's sum of squares, summed in order in
// float64 (rows of one length).
func sumSquares4(x0, x1, x2, x3 []float32) [4]float64 {
	var s0, s1, s2, s3 float64
	x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
	for i, v := range x0 {
		s0 += float64(v * v)
		s1 += float64(x1[i] * x1[i])
		s2 += float64(x2[i] * x2[i])
		s3 += float64(x3[i] * x3[i])
	}
	return [4]float64{s0, s1, s2, s3}
}

// normRow writes (x·scale)·weight to out, with scale from the row's sum of
// squares.
func normRow(x, out, weight []float32, sum float64, eps float32) {
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	out, weight = out[:len(x)], weight[:len(x)]
	for i, v := range x {
		out[i] = (v * scale) * weight[i]
	}
}

// SwiGLU implements compute.Backend.
func (c *Backend) SwiGLU(gateT, upT, outT compute.Tensor) {
	gate, up, out := host(gateT), host(upT), host(outT)
	c.pool.parallelFor(len(out), grain(1), func(lo, hi int) {
		if c.vec != vecNone {
			swigluVec(c.vec, gate[lo:hi], up[lo:hi], out[lo:hi])
			return
		}
		for i := lo; i < hi; i++ {
			g := gate[i]
			out[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
		}
	})
}

// MoERoute implements compute.Backend.
func (c *Backend) MoERoute(logitsT compute.Tensor, k int, probsT compute.Tensor, experts []int32, weights []float32) {
	compute.RouteRows(host(logitsT), logitsT.Cols(), k, host(probsT), experts, weights)
}
