package cpu

import (
	"math"
	"testing"

	"github.com/helexa/helexa/internal/greedy"
)

// TestArgMaxRows: the CPU's greedy tokens are the sampler's (the lowest
// index on ties), -1 for a row without a finite value, and a bad row or a
// short output is an error.
func TestArgMaxRows(t *testing.T) {
	c := New(2)
	defer c.Close()
	const rows, n = 6, 1003
	x := randVec(rows*n, 5)
	for i := range x {
		x[i] = float32(int(x[i]*3)) / 3 // many ties
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for i := 4 * n; i < 5*n; i++ { // row 4: nothing finite
		x[i] = []float32{inf, float32(math.Inf(-1)), nan}[i%3]
	}
	x[2*n+7] = inf // +Inf is not a greedy token
	tt := &hostTensor{data: x, rows: rows, cols: n}
	idx := []int32{5, 0, 4, 2, 2}
	out := make([]int32, len(idx))
	if err := c.ArgMaxRows(tt, idx, out); err != nil {
		t.Fatal(err)
	}
	for i, r := range idx {
		want, _, ok := greedy.MaxFinite(x[int(r)*n : int(r+1)*n])
		if !ok {
			want = -1
		}
		if out[i] != want {
			t.Errorf("row %d: argmax %d, sampler %d", r, out[i], want)
		}
	}
	if out[2] != -1 {
		t.Errorf("row 4 (no finite value): %d, want -1", out[2])
	}
	if err := c.ArgMaxRows(tt, []int32{rows}, out); err == nil {
		t.Error("row out of range: no error")
	}
	if err := c.ArgMaxRows(tt, idx, out[:2]); err == nil {
		t.Error("short output: no error")
	}
}
