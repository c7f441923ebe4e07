package arch

import "github.com/helexa/helexa/pkg/compute"

// moeScratch holds the host side of the routed-experts FFN: the routing
// choices and the row indexes that drive the gathers.
type moeScratch struct {
	experts        []int32
	weights, probs []float32
	from, to       []int32
	scale          []float32
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

// moe runs the routed-experts FFN as llama.cpp does for qwen3moe: softmax
// over the router logits, the top-k experts, their probabilities
// renormalised to sum to 1, each expert's SwiGLU FFN scaled by its weight,
// the k results summed in rank order.
func (p *pass) moe(il int, x, out compute.Tensor, hook RoutingHook) error {
	be, hp, l, ms := p.be, &p.m.HP, &p.m.layers[il], &p.s.moe
	rows, ne, k, d := p.rows, hp.NExpert, hp.NExpertUse, hp.NEmbd
	logits, err := p.s.get(be, "moe.logits", rows, ne)
	if err != nil {
		return err
	}
	probs, err := p.s.get(be, "moe.probs", rows, ne)
	if err != nil {
		return err
	}
	if err := be.MatMul(l.router, x, logits); err != nil {
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
	for e := 0; e < ne; e++ {
		if err := p.expert(l, e, x, slots); err != nil {
			return err
		}
	}
	be.SumRowGroups(slots, k, out)
	return nil
}

// expert runs expert e over the rows routed to it, writing each result,
// scaled by its routing weight, to the row's slot.
func (p *pass) expert(l *layer, e int, x, slots compute.Tensor) error {
	be, ms, k, d := p.be, &p.s.moe, p.m.HP.NExpertUse, p.m.HP.NEmbd
	from, to, scale := ms.from[:0], ms.to[:0], ms.scale[:0]
	for i, ex := range ms.experts {
		if int(ex) == e {
			from = append(from, int32(i/k))
			to = append(to, int32(i))
			scale = append(scale, ms.weights[i])
		}
	}
	ms.from, ms.to, ms.scale = from, to, scale
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
	gate, up, down := l.expert(e)
	if err := denseFFN(be, p.s, gate, up, down, in, o); err != nil {
		return err
	}
	be.ScaleRowsTo(o, to, scale, slots)
	return nil
}
