package greedy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxFiniteMatchesScan: the four-lane MaxFinite returns what one scan
// in order returns (the largest finite value, the lowest index on ties,
// none among NaN and ±Inf only), over lengths around its lanes and ties
// between lanes.
func TestMaxFiniteMatchesScan(t *testing.T) {
	scan := func(x []float32) (int32, float32, bool) {
		m, best, ok := float32(math.Inf(-1)), int32(0), false
		for i, v := range x {
			if v > m && !math.IsInf(float64(v), 1) {
				m, best, ok = v, int32(i), true
			}
		}
		if !ok {
			return 0, 0, false
		}
		return best, m, true
	}
	r := rand.New(rand.NewPCG(3, 4))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	specials := []float32{inf, -inf, nan}
	for n := 0; n <= 19; n++ {
		for trial := range 200 {
			x := make([]float32, n)
			for i := range x {
				switch v := r.IntN(10); {
				case v < 2:
					x[i] = specials[r.IntN(3)]
				default:
					x[i] = float32(r.IntN(4 + trial%5)) // many ties
				}
			}
			gb, gm, gok := MaxFinite(x)
			wb, wm, wok := scan(x)
			if gb != wb || gm != wm || gok != wok {
				t.Fatalf("%v: MaxFinite (%d, %v, %v), scan (%d, %v, %v)", x, gb, gm, gok, wb, wm, wok)
			}
		}
	}
}
