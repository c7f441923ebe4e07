package quant

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// multiActivations builds nX activation rows of n elements for typ, stored xPad
// junk bytes apart.
func multiActivations(t *testing.T, r *rand.Rand, typ dtype.Type, n, nX, xPad int) ([]byte, int) {
	t.Helper()
	var xq []byte
	stride := 0
	for j := 0; j < nX; j++ {
		row := mustActivations(t, typ, gaussian(r, n, math.Pow(10, float64(j%3)-1)))
		stride = len(row) + xPad
		xq = append(xq, row...)
		for k := 0; k < xPad; k++ {
			xq = append(xq, byte(r.Uint32()))
		}
	}
	return xq, stride
}

// TestVecDotRowsMultiMatchesVecDotRows: the multi-activation kernel is bit
// for bit VecDotRows per activation row, for every weight type, group
// sizes below, at and above the kernels' tiles (8 and 16 rows), padded strides, and
// it writes nothing outside its outputs.
func TestVecDotRowsMultiMatchesVecDotRows(t *testing.T) {
	checkMultiMatchesRows(t, weightTypes, false, VecDotRowsMulti, VecDotRows)
}

// rowsMultiFn is VecDotRowsMulti's signature, rowsFn VecDotRows's: the
// kernels checkMultiMatchesRows compares.
type (
	rowsMultiFn func(typ dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) error
	rowsFn      func(typ dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) error
)

// checkMultiMatchesRows checks that multi gives each activation row the
// bits rows gives it alone, for the weight types types, the group sizes
// and strides below (with q8Tail, Q8_0 rows one block longer: an odd
// number of blocks), and that it writes nothing outside its outputs.
func checkMultiMatchesRows(t *testing.T, types []dtype.Type, q8Tail bool, multi rowsMultiFn, rows rowsFn) {
	r := rand.New(rand.NewPCG(31, 32))
	cases := []struct{ n, rows, pad, nX, xPad, outPad int }{
		{256, 1, 0, 1, 0, 0}, {512, 7, 0, 3, 0, 2}, {256, 5, 4, 8, 6, 0}, {1024, 3, 12, 11, 2, 5}, {256, 9, 0, 17, 0, 1},
		{256, 4, 0, 16, 0, 0}, {512, 3, 4, 40, 3, 1}, {256, 6, 0, 2, 1, 3}, {512, 5, 4, 6, 0, 0}, {256, 7, 2, 4, 0, 1},
	}
	for _, typ := range types {
		for _, tc := range cases {
			if q8Tail && typ == dtype.Q8_0 {
				tc.n += 32
			}
			t.Run(fmt.Sprintf("%s/%+v", typ, tc), func(t *testing.T) {
				w, stride := buildRows(t, r, typ, tc.n, tc.rows, tc.pad)
				xq, xStride := multiActivations(t, r, typ, tc.n, tc.nX, tc.xPad)
				os := tc.rows + tc.outPad
				out := make([]float32, tc.nX*os)
				for i := range out {
					out[i] = 42
				}
				if err := multi(typ, w, stride, tc.rows, xq, xStride, tc.nX, tc.n, out, os); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, tc.rows)
				for j := 0; j < tc.nX; j++ {
					if err := rows(typ, w, stride, tc.rows, xq[j*xStride:], tc.n, want); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < os; i++ {
						got := out[j*os+i]
						if i >= tc.rows {
							if got != 42 {
								t.Fatalf("activation row %d: wrote output %d past nRows", j, i)
							}
							continue
						}
						if math.Float32bits(got) != math.Float32bits(want[i]) {
							t.Fatalf("activation row %d weight row %d: %.9g, alone %.9g", j, i, got, want[i])
						}
					}
				}
			})
		}
	}
}

func TestVecDotRowsMultiErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	w, stride := buildRows(t, r, dtype.Q8_0, 256, 4, 0)
	xq, xs := multiActivations(t, r, dtype.Q8_0, 256, 2, 0)
	out := make([]float32, 8)
	tests := []struct {
		name                string
		typ                 dtype.Type
		n, rows, nX, xs, os int
		w, xq               []byte
		want                error
	}{
		{"unsupported type", dtype.Q8_K, 256, 4, 2, xs, 4, w, xq, ErrUnsupportedType},
		{"partial block", dtype.Q8_0, 250, 4, 2, xs, 4, w, xq, ErrBufferSize},
		{"negative activation rows", dtype.Q8_0, 256, 4, -1, xs, 4, w, xq, ErrBufferSize},
		{"short activation stride", dtype.Q8_0, 256, 4, 2, xs - 1, 4, w, xq, ErrBufferSize},
		{"short output stride", dtype.Q8_0, 256, 4, 2, xs, 3, w, xq, ErrBufferSize},
		{"short activations", dtype.Q8_0, 256, 4, 2, xs, 4, w, xq[:len(xq)-1], ErrBufferSize},
		{"short weights", dtype.Q8_0, 256, 4, 2, xs, 4, w[:len(w)-1], xq, ErrBufferSize},
		{"short outputs", dtype.Q8_0, 256, 4, 3, xs, 4, w, append(xq, xq...), ErrBufferSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VecDotRowsMulti(tc.typ, tc.w, stride, tc.rows, tc.xq, tc.xs, tc.nX, tc.n, out, tc.os)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	if err := VecDotRowsMulti(dtype.Q8_0, w, stride, 0, xq, xs, 2, 256, nil, 4); err != nil {
		t.Fatalf("zero weight rows: %v", err)
	}
}
