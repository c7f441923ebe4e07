//go:build cgo && !purego

package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// TestPackedMatchesPortable compares the packed kernels (decode tiles and,
// from 32 activation rows, the interleaved prefill fed from packed groups)
// with the Go oracle, for every type that packs, whole matrices and a
// slice of their groups.
func TestPackedMatchesPortable(t *testing.T) {
	if maxLevel() < LevelVNNI {
		t.Skip("this CPU has no AVX-512 VNNI: the packed kernels cannot run here")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_K, dtype.Q6_K} {
		for _, sh := range []struct{ n, rows, nX, g0, g1 int }{
			{256, 16, 1, 0, 1}, {512, 32, 1, 0, 2}, {1024, 48, 2, 1, 3}, {768, 16, 3, 0, 1}, {768, 32, 4, 0, 2},
			{1024, 16, 5, 0, 1}, {512, 32, 8, 0, 2}, {1024, 32, 31, 0, 2}, {512, 16, 32, 0, 1}, {768, 48, 40, 1, 3},
			{256 * 11, 16, 1, 0, 1}, {256 * 11, 32, 7, 1, 2},
		} {
			n := sh.n
			if typ == dtype.Q8_0 {
				n += 32 // an odd number of blocks
			}
			t.Run(fmt.Sprintf("%s/n%d/rows%d/x%d/g%d-%d", typ, n, sh.rows, sh.nX, sh.g0, sh.g1), func(t *testing.T) {
				w, xq, rb, xs := randomRows(t, r, typ, n, sh.rows, sh.nX)
				if !packs(typ, sh.rows, n) {
					t.Fatalf("%s %d × %d does not pack", typ, sh.rows, n)
				}
				p := newPacked(typ, sh.rows, n)
				if err := p.Pack(w, rb, 0, 1); err != nil {
					t.Fatal(err)
				}
				if err := p.Pack(w, rb, 1, p.Groups()); err != nil {
					t.Fatal(err)
				}
				rows := (sh.g1 - sh.g0) * PackRows
				got, want := make([]float32, rows*sh.nX), make([]float32, sh.rows*sh.nX)
				if err := p.Slice(sh.g0, sh.g1).MulRows(0, sh.g1-sh.g0, xq, xs, sh.nX, got, rows); err != nil {
					t.Fatal(err)
				}
				goDotRowsMulti(typ, w, rb, sh.rows, xq, xs, sh.nX, n, want, sh.rows)
				for j := 0; j < sh.nX; j++ {
					xv := dequantActivations(t, typ, xq[j*xs:(j+1)*xs], n)
					for i := 0; i < rows; i++ {
						wi := sh.g0*PackRows + i
						wv := make([]float32, n)
						if err := Dequantize(typ, w[wi*rb:(wi+1)*rb], wv); err != nil {
							t.Fatal(err)
						}
						mag := 0.0
						for k := range wv {
							mag += math.Abs(float64(wv[k]) * float64(xv[k]))
						}
						g, q := got[j*rows+i], want[j*sh.rows+wi]
						if d := math.Abs(float64(g - q)); d > 1e-5*mag || math.IsNaN(float64(g)) {
							t.Fatalf("row %d × activation %d: packed %.9g, portable %.9g (|Δ| %.3g, 1e-5 × Σ|w·x| = %.3g)", wi, j, g, q, d, 1e-5*mag)
						}
					}
				}
			})
		}
	}
}

// TestPackedArguments checks that MulRows and Pack refuse buffers too
// short for the rows asked for, instead of reading past them.
func TestPackedArguments(t *testing.T) {
	if !packs(dtype.Q8_0, 16, 64) {
		t.Skip("this CPU has no AVX-512 VNNI")
	}
	p := newPacked(dtype.Q8_0, 32, 64)
	w := make([]byte, 32*68)
	if err := p.Pack(w[:16*68], 68, 0, 2); err == nil {
		t.Error("Pack of two groups from one group's bytes succeeded")
	}
	xq, out := make([]byte, 68), make([]float32, 32)
	if err := p.MulRows(0, 2, xq, 68, 2, out, 32); err == nil {
		t.Error("MulRows of two activation rows from one row's bytes succeeded")
	}
	if err := p.MulRows(0, 3, xq, 68, 1, out, 32); err == nil {
		t.Error("MulRows past the last group succeeded")
	}
	if err := p.MulRows(0, 2, xq, 68, 1, out[:31], 32); err == nil {
		t.Error("MulRows into too few outputs succeeded")
	}
}

// TestPackedPrefillMatchesFileLayout: from 32 activation rows the packed
// groups are unpacked into the same bytes the interleaved prefill kernels
// unpack from the file's layout, so both give the same bits.
func TestPackedPrefillMatchesFileLayout(t *testing.T) {
	if maxLevel() < LevelVNNI {
		t.Skip("this CPU has no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_K, dtype.Q6_K} {
		for _, sh := range []struct{ n, rows, nX int }{{256, 16, 32}, {768, 48, 40}, {1024, 32, 64}} {
			t.Run(fmt.Sprintf("%s/n%d/rows%d/x%d", typ, sh.n, sh.rows, sh.nX), func(t *testing.T) {
				w, xq, rb, xs := randomRows(t, r, typ, sh.n, sh.rows, sh.nX)
				p := newPacked(typ, sh.rows, sh.n)
				if err := p.Pack(w, rb, 0, p.Groups()); err != nil {
					t.Fatal(err)
				}
				got, want := make([]float32, sh.rows*sh.nX), make([]float32, sh.rows*sh.nX)
				if err := p.MulRows(0, p.Groups(), xq, xs, sh.nX, got, sh.rows); err != nil {
					t.Fatal(err)
				}
				fastRows(LevelVNNI, typ, w, rb, sh.rows, xq, xs, sh.nX, sh.n, want, sh.rows)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("output %d (row %d, activation %d): packed %.9g, file layout %.9g", i, i%sh.rows, i/sh.rows, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestPackedBatchInvariant: a packed matrix gives every activation row the
// same bits whether it is multiplied alone (decode), in a small batch
// (the packed tiles) or in a prefill of many rows (the interleaved
// kernels): chunking and batching do not change logits.
func TestPackedBatchInvariant(t *testing.T) {
	if maxLevel() < LevelVNNI {
		t.Skip("this CPU has no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_K, dtype.Q6_K} {
		const rows, n, nX = 32, 768, 40
		w, xq, rb, xs := randomRows(t, r, typ, n, rows, nX)
		p := newPacked(typ, rows, n)
		if err := p.Pack(w, rb, 0, p.Groups()); err != nil {
			t.Fatal(err)
		}
		all := make([]float32, rows*nX)
		if err := p.MulRows(0, p.Groups(), xq, xs, nX, all, rows); err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{1, 3, 8} {
			part := make([]float32, rows*batch)
			for j0 := 0; j0+batch <= nX; j0 += batch {
				if err := p.MulRows(0, p.Groups(), xq[j0*xs:], xs, batch, part, rows); err != nil {
					t.Fatal(err)
				}
				for i, v := range part {
					if w := all[j0*rows+i]; math.Float32bits(v) != math.Float32bits(w) {
						t.Fatalf("%s: activation %d row %d: %.9g in batches of %d, %.9g in one of %d", typ, j0+i/rows, i%rows, v, batch, w, nX)
					}
				}
			}
		}
	}
}

// randomRows quantizes rows random weight rows of n values (their scales
// spread over four decades) and nX random activation rows for them,
// returning both and their strides.
func randomRows(t *testing.T, r *rand.Rand, typ dtype.Type, n, rows, nX int) (w, xq []byte, rb, xs int) {
	t.Helper()
	for i := 0; i < rows; i++ {
		w = append(w, mustQuantize(t, typ, gaussian(r, n, math.Pow(10, float64(i%4)-2)))...)
	}
	for j := 0; j < nX; j++ {
		xq = append(xq, mustActivations(t, typ, gaussian(r, n, 1))...)
	}
	return w, xq, len(w) / rows, len(xq) / nX
}
