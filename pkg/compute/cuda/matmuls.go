package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// mv3Max is the most weights one hx_mv3 launch takes.
const mv3Max = 3

// mvJob is one product: a prepared weight, its output, its device format
// and the rounding its activations need (actRound of the weight's type).
type mvJob struct {
	w     *compute.Weight
	wp    devPtr
	out   *tensor
	f     format
	round string
}

// MatMul implements compute.Backend: small batches (decode) run the
// format's matvec kernel, which reads each weight block once for up to
// mvMaxRows activation rows; larger ones run a cuBLAS GEMM (see gemm).
func (b *Backend) MatMul(w *compute.Weight, xT, outT compute.Tensor) error {
	return b.MatMuls([]*compute.Weight{w}, xT, []compute.Tensor{outT})
}

// MatMuls implements compute.Backend: x is rounded once per
// rounding the weights need, and the decode products of weights of one
// device format (q, k and v; gate and up) share launches, up to three per
// launch, which is what a decode step pays for on a GPU. Batches that go
// to cuBLAS run one GEMM per weight.
func (b *Backend) MatMuls(ws []*compute.Weight, xT compute.Tensor, outs []compute.Tensor) error {
	x := dev(xT)
	jobs, err := b.jobs(ws, x, outs)
	if err != nil {
		return err
	}
	return b.d.do(func() error {
		rounded := roundings{x: x}
		if x.rows >= gemmMinRows && b.d.gemmer() != nil {
			for _, j := range jobs {
				xr, err := rounded.get(b, j.round)
				if err != nil {
					return err
				}
				if err := b.gemm(j.w, j.wp, j.f, xr, j.out, j.round); err != nil {
					return err
				}
			}
			return nil
		}
		for _, g := range groupJobs(jobs) {
			xr, err := rounded.get(b, g[0].round)
			if err != nil {
				return err
			}
			if err := b.matvec(g, xr); err != nil {
				return err
			}
		}
		return nil
	})
}

// jobs checks the products' shapes and finds their weights on the device.
func (b *Backend) jobs(ws []*compute.Weight, x *tensor, outs []compute.Tensor) ([]mvJob, error) {
	if len(ws) != len(outs) {
		return nil, fmt.Errorf("matmuls: %d weights, %d outputs", len(ws), len(outs))
	}
	jobs := make([]mvJob, len(ws))
	for i, w := range ws {
		o := dev(outs[i])
		if x.cols != w.Cols() || o.cols != w.Rows() || o.rows != x.rows {
			return nil, fmt.Errorf("matmul %s (%d → %d): input %d × %d, output %d × %d", w.Name, w.Cols(), w.Rows(),
				x.rows, x.cols, o.rows, o.cols)
		}
		p, f, err := b.lookup(w)
		if err != nil {
			return nil, err
		}
		jobs[i] = mvJob{w: w, wp: p, out: o, f: f, round: actRound(w.Type)}
	}
	return jobs, nil
}

// roundings is one operation's input rounded by each rounding kernel it
// needs, each computed once (on the owner goroutine).
type roundings struct {
	x    *tensor
	done []roundedAs
}

type roundedAs struct {
	kernel string
	t      *tensor
}

func (r *roundings) get(b *Backend, kernel string) (*tensor, error) {
	for _, d := range r.done {
		if d.kernel == kernel {
			return d.t, nil
		}
	}
	t := r.x
	if kernel != "" {
		if t = b.norm.take(r.x, kernel, b.writes.n); t == nil {
			var err error
			if t, err = b.roundedInput(r.x, kernel); err != nil {
				return nil, err
			}
		}
	}
	r.done = append(r.done, roundedAs{kernel, t})
	return t, nil
}

// groupJobs splits jobs into launches: up to mv3Max jobs of one format and
// one activation rounding each, in order of each kind's first job.
func groupJobs(jobs []mvJob) [][]mvJob {
	var groups [][]mvJob
	taken := make([]bool, len(jobs))
	for i := range jobs {
		if taken[i] {
			continue
		}
		g := []mvJob{jobs[i]}
		for j := i + 1; j < len(jobs) && len(g) < mv3Max; j++ {
			if !taken[j] && jobs[j].f == jobs[i].f && jobs[j].round == jobs[i].round {
				g, taken[j] = append(g, jobs[j]), true
			}
		}
		groups = append(groups, g)
	}
	return groups
}

// mvBlocks is the grid of hx_mv, hx_mv3 and hx_mvg for rows rows: four
// rows per block, a warp each.
func mvBlocks(rows int) int { return max(1, (rows+3)/4) }

// tallRows is the fewest rows of a weight that one activation row
// multiplies with hx_mv2 (two rows a warp) instead of hx_mv: an output
// head, whose rows are too many for the GPU to hold at once, so that
// the blocks' memory latencies add up in waves.
const tallRows = 32768

// matvec launches the products of one group on the (rounded) input x:
// hx_mv for one weight, hx_mv3 for several (on the owner goroutine). The
// K-quants read x's Q8_K records (q8kRows), the other formats its values.
func (b *Backend) matvec(g []mvJob, x *tensor) error {
	most := 0
	for _, j := range g {
		most = max(most, j.w.Rows())
	}
	for _, c := range chunks(x.rows) {
		var a *args
		xq := q8kRows(x, g[0].round, c[0])
		kernel, grid := g[0].f.mvKernel(), mvBlocks(most)
		if len(g) == 1 && c[1] == 1 && most >= tallRows {
			kernel, grid = g[0].f.mv2Kernel(), (most+7)/8
			a = newArgs(6).ptr(g[0].out.row(c[0])).ptr(g[0].wp).ptr(x.row(c[0])).ptr(xq).i32(most).i32(x.cols)
		} else if len(g) == 1 {
			a = newArgs(7).ptr(g[0].out.row(c[0])).ptr(g[0].wp).ptr(x.row(c[0])).ptr(xq).i32(most).i32(x.cols).i32(c[1])
		} else {
			kernel = g[0].f.mv3Kernel()
			a = newArgs(3*mv3Max + 4)
			for i := range mv3Max {
				if i < len(g) {
					a.ptr(g[i].out.row(c[0])).ptr(g[i].wp).i32(g[i].w.Rows())
				} else {
					a.ptr(0).ptr(0).i32(0)
				}
			}
			a.ptr(x.row(c[0])).ptr(xq).i32(x.cols).i32(c[1])
		}
		if err := b.d.launch(kernel, [3]int{grid, len(g), 1}, 128, a); err != nil {
			return err
		}
	}
	return nil
}
