// Package greedy owns the one definition of a greedy pick over a row of
// logits that the sampler and every compute backend's ArgMaxRows share:
// the largest finite value, the lowest index on ties.
package greedy

import "math"

// MaxFinite returns the index (the lowest on ties) and value m of the
// largest finite value; ok is false when there is none: the greedy token
// of logits x, as the sampler picks it (the CPU backend's ArgMaxRows uses
// it too). It keeps four lanes of maxima (lane k: the values at indices ≡
// k mod 4, each lane's lowest index of its maximum), then merges them, so
// that the scan of a 152k-token vocabulary is not one chain of compares
// and branches.
func MaxFinite(x []float32) (best int32, m float32, ok bool) {
	inf := float32(math.Inf(1))
	ms := [4]float32{-inf, -inf, -inf, -inf}
	var bs [4]int
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		if v[0] > ms[0] && v[0] != inf {
			ms[0], bs[0] = v[0], i
		}
		if v[1] > ms[1] && v[1] != inf {
			ms[1], bs[1] = v[1], i+1
		}
		if v[2] > ms[2] && v[2] != inf {
			ms[2], bs[2] = v[2], i+2
		}
		if v[3] > ms[3] && v[3] != inf {
			ms[3], bs[3] = v[3], i+3
		}
	}
	m, b := ms[0], bs[0]
	for k := 1; k < 4; k++ {
		if ms[k] > m || (ms[k] == m && bs[k] < b) {
			m, b = ms[k], bs[k]
		}
	}
	for ; i < len(x); i++ { // after every lane's index: only a larger value wins
		if v := x[i]; v > m && v != inf {
			m, b = v, i
		}
	}
	if m == -inf {
		return 0, 0, false
	}
	return int32(b), m, true
}
