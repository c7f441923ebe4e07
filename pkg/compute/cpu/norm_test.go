package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
)

// vecAndGo returns a CPU running the C row kernels and one running the Go
// kernels (the oracle), or skips where this CPU runs no C kernels.
func vecAndGo(t *testing.T) (vec, ref *Backend) {
	t.Helper()
	vec, ref = New(2), New(2)
	t.Cleanup(func() { vec.Close(); ref.Close() })
	if cpuVecISA() == vecNone {
		t.Skip("this CPU runs no build of the C vector kernels")
	}
	vec.vec, ref.vec = vecAVX2, vecNone
	return vec, ref
}

// sameBits fails unless got and want hold the same float32 bits.
func sameBits(t *testing.T, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: C kernel %.9g, Go kernel %.9g", i, got[i], want[i])
		}
	}
}

// TestRowKernelsMatchGo: the C RMSNorm (in place and not), Add and RoPE
// (both modes, partial rotation) give the Go kernels' bits, over row counts
// around the C RMSNorm's groups of four and eight and widths around its
// vectors.
func TestRowKernelsMatchGo(t *testing.T) {
	vec, ref := vecAndGo(t)
	for _, rows := range []int{1, 3, 4, 5, 8, 9, 13, 40} {
		for _, n := range []int{1, 3, 4, 7, 8, 20, 64, 128, 1000, 1024} {
			t.Run(fmt.Sprintf("rows%d/n%d", rows, n), func(t *testing.T) {
				x, w := randVec(rows*n, uint64(rows*n)), &compute.Vector{Data: randVec(n, 7)}
				for i := range x { // rows of different magnitudes
					x[i] *= float32(1 + i/n%5)
				}
				got, want := make([]float32, len(x)), make([]float32, len(x))
				vec.RMSNorm(&hostTensor{data: x, rows: rows, cols: n}, w, 1e-6, &hostTensor{data: got, rows: rows, cols: n})
				ref.RMSNorm(&hostTensor{data: x, rows: rows, cols: n}, w, 1e-6, &hostTensor{data: want, rows: rows, cols: n})
				sameBits(t, got, want)
				inPlace := append([]float32(nil), x...)
				vec.RMSNorm(&hostTensor{data: inPlace, rows: rows, cols: n}, w, 1e-6, &hostTensor{data: inPlace, rows: rows, cols: n})
				sameBits(t, inPlace, want)
				got, want = append([]float32(nil), x...), append([]float32(nil), x...)
				src := randVec(len(x), 9)
				vec.Add(&hostTensor{data: got, rows: rows, cols: n}, &hostTensor{data: src, rows: rows, cols: n})
				ref.Add(&hostTensor{data: want, rows: rows, cols: n}, &hostTensor{data: src, rows: rows, cols: n})
				sameBits(t, got, want)
			})
		}
	}
	for _, mode := range []compute.RopeMode{compute.RopeNorm, compute.RopeNeox} {
		for _, tc := range []struct{ rows, heads, hd, dims int }{{1, 1, 8, 8}, {3, 2, 64, 64}, {5, 16, 128, 128}, {2, 3, 128, 64}, {4, 2, 40, 24}, {1, 4, 6, 6}, {9, 8, 64, 32}} {
			t.Run(fmt.Sprintf("rope%d/rows%d/heads%d/hd%d/dims%d", mode, tc.rows, tc.heads, tc.hd, tc.dims), func(t *testing.T) {
				r := &compute.Rope{Mode: mode, Dims: tc.dims, Base: 1e6, FreqScale: 1}
				pos := make([]int32, tc.rows)
				for i := range pos {
					pos[i] = int32(3 + 517*i)
				}
				x := randVec(tc.rows*tc.heads*tc.hd, 11)
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				vec.RoPE(&hostTensor{data: got, rows: tc.rows, cols: tc.heads * tc.hd}, pos, tc.heads, tc.hd, r)
				ref.RoPE(&hostTensor{data: want, rows: tc.rows, cols: tc.heads * tc.hd}, pos, tc.heads, tc.hd, r)
				sameBits(t, got, want)
			})
		}
	}
}
