package cuda

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

var _ compute.MultiMatMulBackend = (*Backend)(nil)

// mv3Max is the most weights one hx_mv3 launch takes.
const mv3Max = 3

// mvJob is one product of a MatMuls call.
type mvJob struct {
	wp    devPtr
	out   *tensor
	rows  int
	f     format
	round string // actRound of the weight's type
}

// MatMuls implements compute.MultiMatMulBackend: the decode products of
// weights of one device format (q, k and v; gate and up) share launches,
// up to three per launch, which is what a decode step pays for on a GPU.
// Batches that go to cuBLAS run as one MatMul each.
func (b *Backend) MatMuls(ws []*compute.Weight, xT compute.Tensor, outs []compute.Tensor) error {
	if len(ws) != len(outs) {
		return fmt.Errorf("matmuls: %d weights, %d outputs", len(ws), len(outs))
	}
	x := dev(xT)
	if len(ws) < 2 || (x.rows >= gemmMinRows && b.d.gemmer() != nil) {
		return b.matMulsEach(ws, xT, outs)
	}
	jobs := make([]mvJob, len(ws))
	for i, w := range ws {
		o := dev(outs[i])
		if x.cols != w.Cols() || o.cols != w.Rows() || o.rows != x.rows {
			return fmt.Errorf("matmul %s (%d → %d): input %d × %d, output %d × %d", w.Name, w.Cols(), w.Rows(),
				x.rows, x.cols, o.rows, o.cols)
		}
		p, f, err := b.lookup(w)
		if err != nil {
			return err
		}
		jobs[i] = mvJob{wp: p, out: o, rows: w.Rows(), f: f, round: actRound(w.Type)}
	}
	return b.d.do(func() error {
		rounded := map[string]*tensor{} // x rounded once per rounding the groups need
		for _, g := range groupJobs(jobs) {
			xr, ok := rounded[g[0].round]
			if !ok {
				var err error
				if xr, err = b.roundedInput(x, g[0].round); err != nil {
					return err
				}
				rounded[g[0].round] = xr
			}
			if err := b.mv3(g, xr); err != nil {
				return err
			}
		}
		return nil
	})
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

// mv3 launches hx_mv3 for the jobs of one group (on the owner goroutine).
func (b *Backend) mv3(g []mvJob, x *tensor) error {
	most := 0
	for _, j := range g {
		most = max(most, j.rows)
	}
	for _, c := range chunks(x.rows) {
		a := newArgs(3*mv3Max + 3)
		for i := range mv3Max {
			if i < len(g) {
				a.ptr(g[i].out.row(c[0])).ptr(g[i].wp).i32(g[i].rows)
			} else {
				a.ptr(0).ptr(0).i32(0)
			}
		}
		a.ptr(x.row(c[0])).i32(x.cols).i32(c[1])
		if err := b.d.launch(g[0].f.mv3Kernel(), [3]int{(most + 3) / 4, len(g), 1}, 128, a); err != nil {
			return err
		}
	}
	return nil
}

// matMulsEach runs the products one MatMul at a time.
func (b *Backend) matMulsEach(ws []*compute.Weight, x compute.Tensor, outs []compute.Tensor) error {
	for i, w := range ws {
		if err := b.MatMul(w, x, outs[i]); err != nil {
			return err
		}
	}
	return nil
}
