package cpu

import (
	"fmt"

	"github.com/helexa/helexa/internal/greedy"
	"github.com/helexa/helexa/pkg/compute"
)

// hostTensor is the CPU's Tensor: a row-major slice in host memory.
type hostTensor struct {
	data       []float32
	rows, cols int
}

func (t *hostTensor) Rows() int { return t.rows }
func (t *hostTensor) Cols() int { return t.cols }

// host returns the values of a tensor this backend made.
func host(t compute.Tensor) []float32 {
	h, ok := t.(*hostTensor)
	if !ok {
		panic(fmt.Sprintf("cpu: tensor %T does not belong to the CPU backend", t))
	}
	return h.data
}

// NewTensor implements compute.Backend.
func (c *Backend) NewTensor(rows, cols int) (compute.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("tensor of %d × %d", rows, cols)
	}
	return &hostTensor{data: make([]float32, rows*cols), rows: rows, cols: cols}, nil
}

// View implements compute.Backend.
func (c *Backend) View(t compute.Tensor, rows, cols int) compute.Tensor {
	d := host(t)
	if rows < 0 || cols < 0 || rows*cols > len(d) {
		panic(fmt.Sprintf("cpu: view %d × %d of a tensor of %d values", rows, cols, len(d)))
	}
	return &hostTensor{data: d[:rows*cols], rows: rows, cols: cols}
}

// Free implements compute.Backend (the garbage collector frees host memory).
func (c *Backend) Free(compute.Tensor) {}

// Write implements compute.Backend.
func (c *Backend) Write(t compute.Tensor, src []float32) error {
	d := host(t)
	if len(src) != len(d) {
		return fmt.Errorf("write of %d values into a %d × %d tensor", len(src), t.Rows(), t.Cols())
	}
	copy(d, src)
	return nil
}

// ReadRow implements compute.Backend.
func (c *Backend) ReadRow(t compute.Tensor, r int, dst []float32) error {
	d, n := host(t), t.Cols()
	if r < 0 || r >= t.Rows() || len(dst) < n {
		return fmt.Errorf("read of row %d (%d values) from a %d × %d tensor", r, len(dst), t.Rows(), n)
	}
	copy(dst, d[r*n:(r+1)*n])
	return nil
}

// PrepareVector implements compute.Backend.
func (c *Backend) PrepareVector(*compute.Vector) error { return nil }

// SetReducer makes this backend one rank of a tensor-parallel group:
// AllReduce sums through r. Call it before the first pass.
func (c *Backend) SetReducer(r compute.Reducer) { c.reducer = r }

// AllReduce implements compute.Backend: without a Reducer the backend is the only
// rank and the sum is t itself.
func (c *Backend) AllReduce(t compute.Tensor) error {
	if c.reducer == nil {
		return nil
	}
	if err := c.reducer.AllReduce(host(t)); err != nil {
		return fmt.Errorf("all-reduce of %d × %d: %w", t.Rows(), t.Cols(), err)
	}
	return nil
}

// NewKV implements compute.Backend.
func (c *Backend) NewKV(s compute.KVShape) (compute.KV, error) {
	return newKVCache(s)
}

// AddRow implements compute.Backend.
func (c *Backend) AddRow(x compute.Tensor, bias *compute.Vector) {
	xs, n := host(x), len(bias.Data)
	for r := 0; r < x.Rows(); r++ {
		c.add(xs[r*n:(r+1)*n], bias.Data)
	}
}

// GatherRows implements compute.Backend.
func (c *Backend) GatherRows(src compute.Tensor, rows []int32, dst compute.Tensor) {
	s, d, n := host(src), host(dst), src.Cols()
	for i, r := range rows {
		copy(d[i*n:(i+1)*n], s[int(r)*n:(int(r)+1)*n])
	}
}

// ScaleRowsTo implements compute.Backend.
func (c *Backend) ScaleRowsTo(src compute.Tensor, to []int32, scale []float32, dst compute.Tensor) {
	s, d, n := host(src), host(dst), src.Cols()
	for i, r := range to {
		dr, sr, w := d[int(r)*n:(int(r)+1)*n], s[i*n:(i+1)*n], scale[i]
		for j, v := range sr {
			dr[j] = v * w
		}
	}
}

// SumRowGroups implements compute.Backend.
func (c *Backend) SumRowGroups(src compute.Tensor, k int, out compute.Tensor) {
	s, o, n := host(src), host(out), src.Cols()
	for r := 0; r < out.Rows(); r++ {
		dst := o[r*n : (r+1)*n]
		copy(dst, s[r*k*n:(r*k+1)*n])
		for j := 1; j < k; j++ {
			c.add(dst, s[(r*k+j)*n:(r*k+j+1)*n])
		}
	}
}

// ArgMaxRows implements compute.Backend: the greedy token of each row read
// where the logits are (greedy.MaxFinite, the sampler's own pick), rows
// spread over the workers, instead of each row copied out of the tensor
// and scanned on the caller's thread.
func (c *Backend) ArgMaxRows(tT compute.Tensor, rows []int32, out []int32) error {
	if err := compute.CheckArgMaxRows(tT, rows, out); err != nil {
		return err
	}
	t, n := host(tT), tT.Cols()
	c.pool.parallelFor(len(rows), grain(n), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := int(rows[i])
			best, _, ok := greedy.MaxFinite(t[r*n : (r+1)*n])
			if !ok {
				best = -1
			}
			out[i] = best
		}
	})
	return nil
}

// Add implements compute.Backend.
func (c *Backend) Add(dst, src compute.Tensor) { c.add(host(dst), host(src)) }

// minVecAdd is the shortest add worth a cgo call (about 40 ns, the Go
// loop's time for some 30 values).
const minVecAdd = 64

// add adds src to dst (len(dst) values), with the C kernel where the CPU
// runs one.
func (c *Backend) add(dst, src []float32) {
	if c.vec != vecNone && len(dst) >= minVecAdd {
		addVec(dst, src[:len(dst)])
		return
	}
	addSlice(dst, src)
}

func addSlice(dst, src []float32) {
	for i := range dst {
		dst[i] += src[i]
	}
}

var _ compute.Backend = (*Backend)(nil)
