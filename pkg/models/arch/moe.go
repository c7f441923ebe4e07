package arch

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute"
)

// moe is the routed-experts FFN block: a router and either stacked expert
// matrices (GGUF's ffn_*_exps) or one matrix per expert (safetensors
// checkpoints).
type moe struct {
	router                     *compute.Weight
	gateExps, upExps, downExps *compute.Weight
	gateE, upE, downE          []*compute.Weight
}

// bind looks up layer i's router and experts.
func (b *moe) bind(t *tensors, m *Model, i int) {
	hp := &m.HP
	p := blk(i)
	b.router = t.matrix(p+"ffn_gate_inp.weight", hp.NEmbd, hp.NExpert)
	if !t.hf {
		b.gateExps = t.experts(p+"ffn_gate_exps.weight", hp.NEmbd, -1, hp.NExpert)
		if b.gateExps != nil {
			nff := b.gateExps.Rows()
			b.upExps = t.experts(p+"ffn_up_exps.weight", hp.NEmbd, nff, hp.NExpert)
			b.downExps = t.experts(p+"ffn_down_exps.weight", nff, hp.NEmbd, hp.NExpert)
		}
		return
	}
	nff := -1
	for e := 0; e < hp.NExpert && t.err == nil; e++ {
		x := fmt.Sprintf("model.layers.%d.mlp.experts.%d.", i, e)
		gate := t.matrix(x+"gate_proj.weight", hp.NEmbd, nff)
		if gate == nil {
			return
		}
		nff = gate.Rows()
		b.gateE = append(b.gateE, gate)
		b.upE = append(b.upE, t.matrix(x+"up_proj.weight", hp.NEmbd, nff))
		b.downE = append(b.downE, t.matrix(x+"down_proj.weight", nff, hp.NEmbd))
	}
}

func (b *moe) params(ps *paramSet) {
	ps.w(b.router, b.gateExps, b.upExps, b.downExps)
	ps.w(b.gateE...)
	ps.w(b.upE...)
	ps.w(b.downE...)
}

// width is the hidden width of one expert.
func (b *moe) width() int {
	if b.gateExps != nil {
		return b.gateExps.Rows()
	}
	return b.gateE[0].Rows()
}

// count is the number of experts.
func (b *moe) count() int {
	if b.gateExps != nil {
		return b.gateExps.Mats()
	}
	return len(b.gateE)
}

// expert returns expert e's FFN matrices.
func (b *moe) expert(e int) (gate, up, down *compute.Weight) {
	if b.gateE != nil {
		return b.gateE[e], b.upE[e], b.downE[e]
	}
	return b.gateExps.Mat(e), b.upExps.Mat(e), b.downExps.Mat(e)
}

func (b *moe) shardFFN(sp *shardSpans) (ffn, error) {
	s, err := b.shard(sp)
	return &s, err
}

// shard splits every expert's FFN (as per-expert matrices).
func (b *moe) shard(sp *shardSpans) (moe, error) {
	s := moe{router: b.router}
	for e := 0; e < b.count(); e++ {
		gate, up, down := b.expert(e)
		d, err := colSlice(down, sp.ffn)
		if err != nil {
			return s, err
		}
		s.gateE = append(s.gateE, rowSlice(gate, sp.ffn))
		s.upE = append(s.upE, rowSlice(up, sp.ffn))
		s.downE = append(s.downE, d)
	}
	return s, nil
}

// moeScratch holds the host side of the routed-experts FFN: the routing
// choices and the row indexes that drive the gathers.
type moeScratch struct {
	experts        []int32
	weights, probs []float32
	from, to       []int32
	scale          []float32
	// the rest are fewRows's, reused: the active experts, where each one's
	// rows start in from/to/scale, its scratch tensors' names and the
	// operands of its two passes
	active, starts           []int32
	names                    [][5]string
	pairW, downs             []*compute.Weight
	pairX, pairOut, hs, outs []compute.Tensor
}

// appendRouted appends the rows routed to expert e (k experts a row) to
// from (the row), to (its slot: row·k + rank) and scale (its weight).
func (ms *moeScratch) appendRouted(e, k int) {
	for i, ex := range ms.experts {
		if int(ex) == e {
			ms.from, ms.to, ms.scale = append(ms.from, int32(i/k)), append(ms.to, int32(i)), append(ms.scale, ms.weights[i])
		}
	}
}

func growInts(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

func growFloats(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// forward runs the routed-experts FFN as llama.cpp does for qwen3moe: softmax
// over the router logits, the top-k experts, their probabilities
// renormalised to sum to 1, each expert's SwiGLU FFN scaled by its weight,
// the k results summed in rank order.
func (b *moe) forward(p *pass, il int, x, out compute.Tensor, hook RoutingHook) error {
	be, hp, ms := p.be, &p.m.HP, &p.s.moe
	rows, ne, k, d := p.rows, hp.NExpert, hp.NExpertUse, hp.NEmbd
	logits, err := p.s.get(be, "moe.logits", rows, ne)
	if err != nil {
		return err
	}
	probs, err := p.s.get(be, "moe.probs", rows, ne)
	if err != nil {
		return err
	}
	if err := be.MatMul(b.router, x, logits); err != nil {
		return err
	}
	experts, weights := growInts(&ms.experts, rows*k), growFloats(&ms.weights, rows*k)
	be.MoERoute(logits, k, probs, experts, weights)
	if hook != nil {
		row := growFloats(&ms.probs, ne)
		for r := 0; r < rows; r++ {
			if err := be.ReadRow(probs, r, row); err != nil {
				return err
			}
			hook(r, il, experts[r*k:(r+1)*k], row)
		}
	}
	slots, err := p.s.get(be, "moe.slots", rows*k, d) // (row, rank) → weighted expert output
	if err != nil {
		return err
	}
	if pb, ok := be.(compute.PairedMatMulBackend); ok && rows <= pairedRows {
		if err := b.fewRows(p, pb, x, slots); err != nil {
			return err
		}
	} else {
		for e := 0; e < ne; e++ {
			if err := b.runExpert(p, e, x, slots); err != nil {
				return err
			}
		}
	}
	be.SumRowGroups(slots, k, out)
	return nil
}

// pairedRows is the most rows whose routed experts run as fewRows does:
// up to it, each expert gets a few rows and its products are short, so one
// parallel pass for all of them pays fewer synchronisations than two per
// expert; above it (prefill), each expert's rows share its weights best in
// passes of their own.
const pairedRows = 16

// fewRows runs the routed experts of a few rows (decode steps) in two
// parallel passes instead of two per expert: every active expert's gate
// and up, each over its own gathered rows, in one, and every down in the
// other. Each result, scaled by its routing weight, goes to its row's
// slot of its rank, as runExpert puts it.
func (b *moe) fewRows(p *pass, pb compute.PairedMatMulBackend, x, slots compute.Tensor) error {
	be, ms, k := p.be, &p.s.moe, p.m.HP.NExpertUse
	ms.from, ms.to, ms.scale, ms.starts = ms.from[:0], ms.to[:0], ms.scale[:0], ms.starts[:0]
	ms.active = ms.active[:0]
	for e := 0; e < b.count(); e++ { // the experts in order, each with its rows
		n := len(ms.from)
		if ms.appendRouted(e, k); len(ms.from) > n {
			ms.active, ms.starts = append(ms.active, int32(e)), append(ms.starts, int32(n))
		}
	}
	ms.starts = append(ms.starts, int32(len(ms.from)))
	ms.pairW, ms.pairX, ms.pairOut = ms.pairW[:0], ms.pairX[:0], ms.pairOut[:0]
	ms.downs, ms.hs, ms.outs = ms.downs[:0], ms.hs[:0], ms.outs[:0]
	for a, e := range ms.active {
		t, err := b.expertTensors(p, a, int(ms.starts[a+1]-ms.starts[a]))
		if err != nil {
			return err
		}
		be.GatherRows(x, ms.from[ms.starts[a]:ms.starts[a+1]], t[0])
		gate, up, down := b.expert(int(e))
		ms.pairW, ms.pairX, ms.pairOut = append(ms.pairW, gate, up), append(ms.pairX, t[0], t[0]), append(ms.pairOut, t[1], t[2])
		ms.downs, ms.hs, ms.outs = append(ms.downs, down), append(ms.hs, t[3]), append(ms.outs, t[4])
	}
	if err := pb.MatMulPairs(ms.pairW, ms.pairX, ms.pairOut); err != nil {
		return err
	}
	for a := range ms.active {
		be.SwiGLU(ms.pairOut[2*a], ms.pairOut[2*a+1], ms.hs[a])
	}
	if err := pb.MatMulPairs(ms.downs, ms.hs, ms.outs); err != nil {
		return err
	}
	for a := range ms.active {
		lo, hi := ms.starts[a], ms.starts[a+1]
		be.ScaleRowsTo(ms.outs[a], ms.to[lo:hi], ms.scale[lo:hi], slots)
	}
	return nil
}

// expertTensors returns the scratch tensors of fewRows's a-th active
// expert for n rows: its gathered input, gate, up, hidden and output.
func (b *moe) expertTensors(p *pass, a, n int) ([5]compute.Tensor, error) {
	ms, d, nff := &p.s.moe, p.m.HP.NEmbd, b.width()
	for len(ms.names) <= a {
		i := len(ms.names)
		var names [5]string
		for j, part := range []string{"in", "g", "u", "h", "o"} {
			names[j] = fmt.Sprintf("moe.%s%d", part, i)
		}
		ms.names = append(ms.names, names)
	}
	var t [5]compute.Tensor
	for j, name := range ms.names[a] {
		cols := nff
		if j == 0 || j == 4 {
			cols = d
		}
		var err error
		if t[j], err = p.s.get(p.be, name, n, cols); err != nil {
			return t, err
		}
	}
	return t, nil
}

// runExpert runs expert e over the rows routed to it, writing each result,
// scaled by its routing weight, to the row's slot.
func (b *moe) runExpert(p *pass, e int, x, slots compute.Tensor) error {
	be, ms, k, d := p.be, &p.s.moe, p.m.HP.NExpertUse, p.m.HP.NEmbd
	ms.from, ms.to, ms.scale = ms.from[:0], ms.to[:0], ms.scale[:0]
	ms.appendRouted(e, k)
	from, to, scale := ms.from, ms.to, ms.scale
	if len(from) == 0 {
		return nil
	}
	in, err := p.s.get(be, "moe.in", len(from), d)
	if err != nil {
		return err
	}
	o, err := p.s.get(be, "moe.out", len(from), d)
	if err != nil {
		return err
	}
	be.GatherRows(x, from, in)
	gate, up, down := b.expert(e)
	if err := denseFFN(be, p.s, gate, up, down, false, in, o); err != nil {
		return err
	}
	be.ScaleRowsTo(o, to, scale, slots)
	return nil
}

// sharedMoE is routed experts plus a shared expert whose output is scaled,
// row by row, by sigmoid(gate · x) (qwen35moe, Qwen3-Next).
type sharedMoE struct {
	moe
	shared gatedMLP
	gate   *compute.Weight // ffn_gate_inp_shexp: one row
}

// bind looks up layer i's experts, shared expert and its gate.
func (f *sharedMoE) bind(t *tensors, m *Model, i int) {
	hp := &m.HP
	p := blk(i)
	f.moe.bind(t, m, i)
	f.gate = t.rowWeight(p+"ffn_gate_inp_shexp.weight", hp.NEmbd)
	f.shared.gate = t.matrix(p+"ffn_gate_shexp.weight", hp.NEmbd, -1)
	if f.shared.gate != nil {
		nff := f.shared.gate.Rows()
		f.shared.up = t.matrix(p+"ffn_up_shexp.weight", hp.NEmbd, nff)
		f.shared.down = t.matrix(p+"ffn_down_shexp.weight", nff, hp.NEmbd)
	}
}

func (f *sharedMoE) params(ps *paramSet) {
	f.moe.params(ps)
	f.shared.params(ps)
	ps.w(f.gate)
}

// forward: out = experts(x) + sigmoid(gate·x) · shared(x).
func (f *sharedMoE) forward(p *pass, il int, x, out compute.Tensor, hook RoutingHook) error {
	if err := f.moe.forward(p, il, x, out, hook); err != nil {
		return err
	}
	var ts [2]compute.Tensor
	if err := p.tensors(ts[:], buf{"shexp.out", out.Cols()}, buf{"shexp.gate", 1}); err != nil {
		return err
	}
	sh, g := ts[0], ts[1]
	if err := f.shared.forward(p, il, x, sh, nil); err != nil {
		return err
	}
	if err := p.be.MatMul(f.gate, x, g); err != nil {
		return err
	}
	p.be.SigmoidMul(sh, g)
	p.be.Add(out, sh)
	return nil
}

func (f *sharedMoE) shardFFN(*shardSpans) (ffn, error) {
	return nil, fmt.Errorf("%w: a shared-expert MoE is not split across ranks", ErrUnsupported)
}
