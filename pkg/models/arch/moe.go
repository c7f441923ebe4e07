package arch

import "github.com/helexa/helexa/pkg/compute"

// moeScratch holds the buffers of the expert FFN.
type moeScratch struct {
	logits, probs, weights, in, out, slots []float32
	experts                                []int32
	sub                                    ffnScratch // FFN buffers of one expert
}

// moe runs the routed-experts FFN as llama.cpp does for qwen3moe: softmax
// over the router logits, the top-k experts, their probabilities
// renormalised to sum to 1, each expert's SwiGLU FFN scaled by its weight,
// the k results summed in rank order.
func (m *Model) moe(be compute.Backend, il, rows int, x, out []float32, s *Scratch, hook RoutingHook) error {
	hp, l := &m.HP, &m.layers[il]
	ms := &s.moe
	ne, k, d := hp.NExpert, hp.NExpertUse, hp.NEmbd
	logits := grow(&ms.logits, rows*ne)
	if err := be.MatMul(l.router, x, rows, logits); err != nil {
		return err
	}
	probs, weights := grow(&ms.probs, rows*ne), grow(&ms.weights, rows*k)
	if cap(ms.experts) < rows*k {
		ms.experts = make([]int32, rows*k)
	}
	experts := ms.experts[:rows*k]
	be.MoERoute(logits, rows, ne, k, probs, experts, weights)
	if hook != nil {
		for r := 0; r < rows; r++ {
			hook(r, il, experts[r*k:(r+1)*k], probs[r*ne:(r+1)*ne])
		}
	}
	slots := grow(&ms.slots, rows*k*d) // (row, rank) → weighted expert output
	var picks []int                    // indexes into experts routed to expert e
	for e := 0; e < ne; e++ {
		picks = picks[:0]
		for i, ex := range experts {
			if int(ex) == e {
				picks = append(picks, i)
			}
		}
		if len(picks) == 0 {
			continue
		}
		in, o := grow(&ms.in, len(picks)*d), grow(&ms.out, len(picks)*d)
		for j, p := range picks {
			r := p / k
			copy(in[j*d:(j+1)*d], x[r*d:(r+1)*d])
		}
		gate, up, down := l.expert(e)
		if err := denseFFN(be, gate, up, down, in, len(picks), o, &ms.sub); err != nil {
			return err
		}
		for j, p := range picks {
			w := weights[p]
			dst, src := slots[p*d:(p+1)*d], o[j*d:(j+1)*d]
			for i, v := range src {
				dst[i] = v * w
			}
		}
	}
	for r := 0; r < rows; r++ {
		dst := out[r*d : (r+1)*d]
		copy(dst, slots[r*k*d:(r*k+1)*d])
		for j := 1; j < k; j++ {
			be.Add(dst, slots[(r*k+j)*d:(r*k+j+1)*d])
		}
	}
	return nil
}
