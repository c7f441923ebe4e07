package compute

import "math"

// RouteRows is MoERoute on host rows of nExpert router logits: a backend
// whose logits live elsewhere copies them here (the choices come back to
// the host anyway).
func RouteRows(logits []float32, nExpert, k int, probs []float32, experts []int32, weights []float32) {
	nRows := len(logits) / nExpert
	for r := 0; r < nRows; r++ {
		Softmax(logits[r*nExpert:(r+1)*nExpert], probs[r*nExpert:(r+1)*nExpert], 1)
		p := probs[r*nExpert : (r+1)*nExpert]
		ex, w := experts[r*k:(r+1)*k], weights[r*k:(r+1)*k]
		topK(p, ex)
		var sum float32
		for j, e := range ex {
			w[j] = p[e]
			sum += w[j]
		}
		for j := range w {
			w[j] /= sum
		}
	}
}

// topK writes into ex the indices of the len(ex) largest values of p,
// largest first, ties to the lower index.
func topK(p []float32, ex []int32) {
	for j := range ex {
		best := int32(-1)
		for i, v := range p {
			if taken(ex[:j], int32(i)) {
				continue
			}
			if best < 0 || v > p[best] {
				best = int32(i)
			}
		}
		ex[j] = best
	}
}

func taken(ex []int32, i int32) bool {
	for _, e := range ex {
		if e == i {
			return true
		}
	}
	return false
}

// Softmax writes the softmax of scale*x into out, as ggml does: the sum of
// exponentials in float64, normalised by a float32 reciprocal.
func Softmax(x, out []float32, scale float32) {
	maxv := float32(math.Inf(-1))
	for i, v := range x {
		out[i] = v * scale
		maxv = max(maxv, out[i])
	}
	var sum float64
	for i, v := range out {
		e := float32(math.Exp(float64(v - maxv)))
		out[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range out {
		out[i] *= inv
	}
}
