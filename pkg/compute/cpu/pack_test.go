//go:build unix

package cpu

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// TestPreparePacks: at the AVX-512 level Prepare packs the mapped weights
// of the types that pack (not a lookup-only table, not a weight in memory
// of its own), the packed matmul agrees with the file's
// bytes to float rounding for decode, batches and prefills (beside a
// weight of 24 rows, and in ranges that split groups), the growth is
// counted, and a mapped weight's bytes still read the same after its pages
// are released.
func TestPreparePacks(t *testing.T) {
	c := New(2)
	defer c.Close()
	const n, m = 512, 256
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0, dtype.Q5_K} {
		t.Run(typ.String(), func(t *testing.T) {
			w := mappedWeight(t, testWeight(t, typ, n, m))
			orig := append([]byte(nil), w.Data...)
			odd := testWeight(t, typ, n, 24)
			var want [][]float32
			for _, nRows := range []int{1, 5, 40} {
				x := randVec(nRows*n, uint64(nRows+7))
				want = append(want, make([]float32, nRows*(m+24)))
				if err := c.MatMuls([]*compute.Weight{w, odd}, &hostTensor{x, nRows, n}, []compute.Tensor{&hostTensor{want[len(want)-1][:nRows*m], nRows, m}, &hostTensor{want[len(want)-1][nRows*m:], nRows, 24}}); err != nil {
					t.Fatal(err)
				}
			}
			before := c.PackedGrowth()
			if err := c.Prepare(w); err != nil {
				t.Fatal(err)
			}
			if packs := quant.CanPack(typ, m, n); (w.Packed() != nil) != packs {
				t.Fatalf("packed %v, CanPack %v", w.Packed() != nil, packs)
			}
			if w.Packed() != nil && c.PackedGrowth()-before != int64(w.Packed().Bytes()-len(orig)) {
				t.Errorf("growth %d, want %d", c.PackedGrowth()-before, w.Packed().Bytes()-len(orig))
			}
			for i, nRows := range []int{1, 5, 40} {
				x := randVec(nRows*n, uint64(nRows+7))
				got := make([]float32, nRows*(m+24))
				if err := c.MatMuls([]*compute.Weight{w, odd}, &hostTensor{x, nRows, n}, []compute.Tensor{&hostTensor{got[:nRows*m], nRows, m}, &hostTensor{got[nRows*m:], nRows, 24}}); err != nil {
					t.Fatal(err)
				}
				for k := range got {
					if d := math.Abs(float64(got[k] - want[i][k])); d > 1e-4*(1+math.Abs(float64(want[i][k]))) {
						t.Fatalf("%d rows, output %d: packed %.9g, file %.9g", nRows, k, got[k], want[i][k])
					}
				}
			}
			for i, nRows := range []int{1, 5, 40} { // ranges that split groups, as a parallel loop's chunks may
				x := randVec(nRows*n, uint64(nRows+7))
				xq, ab, err := c.quantizeRows(w, x, nRows)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range [][2]int{{0, m}, {5, 37}, {17, m}, {16, 48}, {3, 9}} {
					got := make([]float32, nRows*m)
					if err := matMulRange(w, xq, ab, nRows, got, r[0], r[1]); err != nil {
						t.Fatal(err)
					}
					for j := 0; j < nRows; j++ {
						for k := r[0]; k < r[1]; k++ {
							g, f := got[j*m+k], want[i][j*m+k]
							if d := math.Abs(float64(g - f)); d > 1e-4*(1+math.Abs(float64(f))) {
								t.Fatalf("%d rows, range %v, output %d of row %d: packed %.9g, file %.9g", nRows, r, k, j, g, f)
							}
						}
					}
				}
			}
			for i := range orig {
				if w.Data[i] != orig[i] {
					t.Fatalf("byte %d of the mapped weight changed after its pages were released", i)
				}
			}
			lk := mappedWeight(t, testWeight(t, typ, n, m))
			lk.Lookup = true
			if err := c.Prepare(lk); err != nil || lk.Packed() != nil {
				t.Errorf("a lookup-only table was packed (%v)", err)
			}
			own := testWeight(t, typ, n, m) // in memory of its own: packing would keep it twice
			if err := c.Prepare(own); err != nil || own.Packed() != nil {
				t.Errorf("a weight that is not a file mapping was packed (%v)", err)
			}
		})
	}
}

// mappedWeight is w with its bytes in a read-only shared mapping of a file,
// as a GGUF file's tensors are.
func mappedWeight(t *testing.T, w *compute.Weight) *compute.Weight {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, w.Data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, len(w.Data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Skipf("no file mapping here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Munmap(data) })
	mw, err := compute.NewWeight(fmt.Sprintf("%s(mapped)", w.Name), w.Type, w.Dims, data)
	if err != nil {
		t.Fatal(err)
	}
	mw.Mapped = true
	return mw
}

// TestMatMulRangeSplits: a decode-sized range longer than one kernel call
// (callBytes) gives what one call over it gives, bit for bit, packed and
// from the file, whatever the range's edges.
func TestMatMulRangeSplits(t *testing.T) {
	c := New(1)
	defer c.Close()
	const n, m = 512, 4096
	for _, packed := range []bool{false, true} {
		w := testWeight(t, dtype.Q4_K, n, m)
		if packed {
			w = mappedWeight(t, w)
			if err := c.Prepare(w); err != nil {
				t.Fatal(err)
			}
			if w.Packed() == nil && quant.CanPack(dtype.Q4_K, m, n) {
				t.Fatal("not packed")
			}
		}
		for _, nRows := range []int{1, 3} {
			if step := callBytes / (nRows * w.RowBytes()); step >= m/2 {
				t.Fatalf("%d rows: %d rows a call do not split a weight of %d", nRows, step, m)
			}
			xq, ab, err := c.quantizeRows(w, randVec(nRows*n, 3), nRows)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range [][2]int{{0, m}, {5, m - 3}, {900, 3000}} {
				got, want := make([]float32, nRows*m), make([]float32, nRows*m)
				if err := matMulRange(w, xq, ab, nRows, got, r[0], r[1]); err != nil {
					t.Fatal(err)
				}
				if err := matMulCall(w, xq, ab, nRows, want, r[0], r[1]); err != nil {
					t.Fatal(err)
				}
				for k := range got {
					if got[k] != want[k] {
						t.Fatalf("packed %v, %d rows, range %v: output %d is %g in calls, %g in one", packed, nRows, r, k, got[k], want[k])
					}
				}
			}
		}
	}
}
