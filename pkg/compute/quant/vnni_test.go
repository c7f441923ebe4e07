//go:build cgo && !purego

package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// TestFastMatchesPortable compares the AVX2 and the AVX-512 VNNI kernels
// with the Go oracle on random rows of every type they cover, for awkward
// shapes (one activation row, groups that are not a multiple of the tile,
// an odd number of Q8_0 blocks): the integer sums are exact, so the
// results may differ only by float rounding of the reordered sums.
func TestFastMatchesPortable(t *testing.T) {
	for _, lvl := range []Level{LevelAVX2, LevelVNNI} {
		t.Run(lvl.String(), func(t *testing.T) {
			if maxLevel() < lvl {
				t.Skipf("this CPU does not run the %s kernels (the portable and exact paths are tested)", lvl)
			}
			fastMatchesPortable(t, lvl)
		})
	}
}

func fastMatchesPortable(t *testing.T, lvl Level) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K} {
		for _, sh := range []struct{ n, rows, nX int }{{256, 1, 1}, {512, 3, 1}, {512, 9, 1}, {256 * 3, 8, 1}, {768, 5, 9}, {1024, 2, 17}, {512, 3, 16}, {256 * 2, 3, 40}, {256 * 11, 4, 8}, {256 * 11, 1, 1}, {2048, 1, 1}, {1536, 1, 1}, {1280, 1, 1}, {1024, 35, 70}, {256 * 3, 16, 64}, {512, 48, 100}, {512, 20, 16}, {1024, 33, 40}, {512, 5, 3}, {256, 7, 5}} {
			n := sh.n
			if typ == dtype.Q8_0 {
				n += 32 // an odd number of blocks: the one-block tail
			}
			t.Run(fmt.Sprintf("%s/n%d/rows%d/x%d", typ, n, sh.rows, sh.nX), func(t *testing.T) {
				w, xq, rb, xs := randomRows(t, r, typ, n, sh.rows, sh.nX)
				got, want := make([]float32, sh.rows*sh.nX), make([]float32, sh.rows*sh.nX)
				if !fastRows(lvl, typ, w, rb, sh.rows, xq, xs, sh.nX, n, got, sh.rows) {
					t.Fatalf("the %s kernels do not cover %s", lvl, typ)
				}
				goDotRowsMulti(typ, w, rb, sh.rows, xq, xs, sh.nX, n, want, sh.rows)
				checkNearRows(t, typ, w, rb, xq, xs, n, sh.rows, sh.nX, got, want)
			})
		}
	}
}

// TestFastQ8_0Extremes: the fast Q8_0 kernels stay exact at the ends of
// the int8 range (weights of −128, which the AVX2 kernel's sign trick
// turns into an unsigned 128, against activations of ±127).
func TestFastQ8_0Extremes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, rows, nX = 96, 3, 5
	w, xq, rb, xs := randomRows(t, r, dtype.Q8_0, n, rows, nX)
	for i := 0; i < rows*n/32; i++ {
		for k := 0; k < 32; k++ {
			w[34*i+2+k] = byte(0x80 - (k%3)*(i%2)) // −128, or −128 with some −127, −126
		}
	}
	for i := 0; i < nX*n/32; i++ {
		for k := 0; k < 32; k++ {
			xq[34*i+2+k] = byte(int8([]int{127, -127}[(k+i)%2]))
		}
	}
	for _, lvl := range []Level{LevelAVX2, LevelVNNI} {
		if maxLevel() < lvl {
			continue
		}
		got, want := make([]float32, rows*nX), make([]float32, rows*nX)
		if !fastRows(lvl, dtype.Q8_0, w, rb, rows, xq, xs, nX, n, got, rows) {
			t.Fatalf("the %s kernels do not cover Q8_0", lvl)
		}
		goDotRowsMulti(dtype.Q8_0, w, rb, rows, xq, xs, nX, n, want, rows)
		checkNearRows(t, dtype.Q8_0, w, rb, xq, xs, n, rows, nX, got, want)
	}
}

// TestFastWide: rows wider than the AVX2 kernels' stack buffer of what they
// need of the activations (Q8_0 values and scales, Q4_K/Q5_K sums and
// scales) take a buffer from the heap and give the same results as rows
// that fit it: both sides of each type's limit, tiles full and partial.
func TestFastWide(t *testing.T) {
	if maxLevel() < LevelAVX2 {
		t.Skip("this CPU does not run the AVX2 kernels")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		typ   dtype.Type
		n, nX int
	}{
		{dtype.Q8_0, 32 * 113, 8}, {dtype.Q8_0, 32 * 114, 8}, {dtype.Q8_0, 32 * 1025, 9}, {dtype.Q8_0, 32 * 1025, 1},
		{dtype.Q4_K, 256 * 28, 4}, {dtype.Q4_K, 256 * 29, 4}, {dtype.Q5_K, 256 * 29, 5}, {dtype.Q6_K, 256 * 15, 4}, {dtype.Q6_K, 256 * 16, 3},
	} {
		const rows = 3
		w, xq, rb, xs := randomRows(t, r, tc.typ, tc.n, rows, tc.nX)
		got, want := make([]float32, rows*tc.nX), make([]float32, rows*tc.nX)
		if !fastRows(LevelAVX2, tc.typ, w, rb, rows, xq, xs, tc.nX, tc.n, got, rows) {
			t.Fatalf("%s n=%d: fastRows refused", tc.typ, tc.n)
		}
		goDotRowsMulti(tc.typ, w, rb, rows, xq, xs, tc.nX, tc.n, want, rows)
		checkNearRows(t, tc.typ, w, rb, xq, xs, tc.n, rows, tc.nX, got, want)
	}
}

// TestFastQuantizeQ8KMatchesGo: the AVX2 and AVX-512 Q8_K quantizers write
// exactly the Go quantizer's bytes, ties of magnitude and zero blocks
// included.
func TestFastQuantizeQ8KMatchesGo(t *testing.T) {
	for _, lvl := range fastLevels(t) {
		r := rand.New(rand.NewPCG(31, 32))
		for trial := 0; trial < 50; trial++ {
			x := gaussian(r, 256*(1+trial%3), math.Pow(10, float64(trial%6)-3))
			switch trial % 5 {
			case 1:
				x[7], x[100] = -x[3], x[3] // equal magnitudes of both signs
				x[3] = 1e3
				x[200] = -1e3
			case 2:
				clear(x[:256]) // a zero block
			case 3:
				x[5] = -2 * x[9] // the largest value negative, first of its magnitude
				x[9] = -x[5]
			}
			want, got := make([]byte, len(x)/256*292), make([]byte, len(x)/256*292)
			quantizeQ8K(x, want)
			if !quantizeAt(lvl, true, x, got) {
				t.Fatalf("the %s quantizer did not run", lvl)
			}
			if string(got) != string(want) {
				t.Fatalf("%s trial %d: Q8_K bytes differ from Go's", lvl, trial)
			}
		}
	}
}

// TestFastQuantizeQ8_0MatchesGo: the AVX2 and AVX-512 Q8_0 activation
// quantizers write exactly the Go quantizer's bytes.
func TestFastQuantizeQ8_0MatchesGo(t *testing.T) {
	for _, lvl := range fastLevels(t) {
		r := rand.New(rand.NewPCG(41, 42))
		for trial := 0; trial < 50; trial++ {
			x := gaussian(r, 32*(1+trial%9), math.Pow(10, float64(trial%8)-5))
			if trial%4 == 1 {
				clear(x[:32]) // a zero block
			}
			want, got := make([]byte, len(x)/32*34), make([]byte, len(x)/32*34)
			quantizeQ8_0Act(x, want)
			if !quantizeAt(lvl, false, x, got) {
				t.Fatalf("the %s quantizer did not run", lvl)
			}
			if string(got) != string(want) {
				t.Fatalf("%s trial %d: Q8_0 bytes differ from Go's", lvl, trial)
			}
		}
	}
}

// fastLevels are the vector kernel levels this CPU runs (skipping the test
// where it runs none).
func fastLevels(t *testing.T) []Level {
	var lvls []Level
	for _, l := range []Level{LevelAVX2, LevelVNNI} {
		if maxLevel() >= l {
			lvls = append(lvls, l)
		}
	}
	if len(lvls) == 0 {
		t.Skip("this CPU runs neither the AVX2 nor the AVX-512 kernels")
	}
	return lvls
}

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Level
		bad  bool
	}{{"", maxLevel(), false}, {"auto", maxLevel(), false}, {"portable", LevelPortable, false},
		{"AVX2", min(LevelAVX2, maxLevel()), false}, {"exact", min(LevelC, maxLevel()), false}, {"avx512", min(LevelVNNI, maxLevel()), false}, {"fast", 0, true}} {
		got, err := ParseLevel(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// TestAVX2TilesMatchRows: at the avx2 level a weight row gives the same
// bits whatever number of activation rows it is multiplied with (the
// interleaved tiles of sixteen and eight, the kernels for one to seven
// rows, the weight tables of long prefills, the decode kernels of two and
// four weight rows), as docs/performance.md promises: every kernel does the same
// operations for a (weight row, activation row) pair. (The package's tests otherwise
// run the exact kernels, so TestVecDotRowsMultiMatchesVecDotRows does not
// reach these.)
func TestAVX2TilesMatchRows(t *testing.T) {
	if maxLevel() < LevelAVX2 {
		t.Skip("this CPU does not run the AVX2 kernels")
	}
	multi := func(typ dtype.Type, w []byte, rb, rows int, xq []byte, xs, nX, n int, out []float32, os int) error {
		if !fastRows(LevelAVX2, typ, w, rb, rows, xq, xs, nX, n, out, os) {
			return fmt.Errorf("the avx2 kernels do not cover %s", typ)
		}
		return nil
	}
	one := func(typ dtype.Type, w []byte, rb, rows int, xq []byte, n int, out []float32) error {
		return multi(typ, w, rb, rows, xq, len(xq), 1, n, out, rows)
	}
	checkMultiMatchesRows(t, []dtype.Type{dtype.Q8_0, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K}, true, multi, one)
}
