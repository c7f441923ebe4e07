package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/cpu"
)

// The oracle of every kernel test is the project's CPU backend (or
// pkg/compute/quant); these helpers move values in and out of it.

func newCPU(t *testing.T) *cpu.Backend {
	t.Helper()
	be := cpu.New(1)
	t.Cleanup(func() { be.Close() })
	return be
}

// tensor returns a rows × cols CPU tensor holding data.
func tensor(t *testing.T, be *cpu.Backend, rows, cols int, data []float32) compute.Tensor {
	t.Helper()
	x, err := be.NewTensor(rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if data == nil {
		data = make([]float32, rows*cols)
	}
	if err := be.Write(x, data); err != nil {
		t.Fatal(err)
	}
	return x
}

// values returns every value of a CPU tensor, row after row.
func values(t *testing.T, be *cpu.Backend, x compute.Tensor) []float32 {
	t.Helper()
	out := make([]float32, x.Rows()*x.Cols())
	for r := 0; r < x.Rows(); r++ {
		if err := be.ReadRow(x, r, out[r*x.Cols():(r+1)*x.Cols()]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// randVec returns n values uniform in [-scale, scale).
func randVec(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*r.Float32() - 1) * scale
	}
	return v
}

// nanVec returns n NaNs: outputs start as NaN, so a value the kernel does
// not write fails the comparison.
func nanVec(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

// grid1D is the grid of an element-wise kernel over n elements, one block
// more than needed: the extra block must do nothing.
func grid1D(n int) [3]int { return dim((n+255)/256 + 1) }

// closeTo reports the first index where |got − want| > tol·max(|want|,
// floor), or -1; NaN never matches.
func closeTo(got, want []float32, tol, floor float64) (int, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsNaN(w) || math.Abs(g-w) > tol*math.Max(math.Abs(w), floor) {
			return i, fmt.Errorf("value %d: got %g, want %g (tolerance %g)", i, g, w, tol*math.Max(math.Abs(w), floor))
		}
	}
	return -1, nil
}

// check fails the test when got and want differ beyond the tolerance.
func check(t *testing.T, what string, got, want []float32, tol, floor float64) {
	t.Helper()
	if _, err := closeTo(got, want, tol, floor); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// exact fails the test unless got and want are the same bits.
func exact[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: value %d: got %v, want %v", what, i, got[i], want[i])
		}
	}
}
