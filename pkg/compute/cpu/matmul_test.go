package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// testWeight builds an m×n weight of type t from 64 distinct random rows
// repeated (quantizing every row would make the test slow).
func testWeight(t testing.TB, typ dtype.Type, n, m int) *compute.Weight {
	t.Helper()
	var rows [][]byte
	for i := 0; i < 64; i++ {
		b := make([]byte, quant.ActivationBytes(dtype.F32, n)) // room for any type's row
		if err := quant.Quantize(typ, randVec(n, uint64(100+i)), b); err != nil {
			t.Fatal(err)
		}
		rb, _ := typ.RowBytes(int64(n))
		rows = append(rows, b[:rb])
	}
	var data []byte
	for i := 0; i < m; i++ {
		data = append(data, rows[(i*7)%len(rows)]...)
	}
	w, err := compute.NewWeight(typ.String(), typ, []int{n, m}, data)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMatMulMatchesVecDot: the range-batched matmul gives bit for bit what
// quant.VecDot gives row by row, for every weight type, for one activation
// row (decode) and several (prefill, over several weight tiles); with the
// AVX-512 VNNI kernels (not bit-exact) the types they cover agree to float
// rounding.
func TestMatMulMatchesVecDot(t *testing.T) {
	c := New(3)
	defer c.Close()
	const n, m = 256, 3000
	for _, typ := range compute.SupportedTypes() {
		w := testWeight(t, typ, n, m)
		for _, nRows := range []int{1, 3, 11} {
			t.Run(fmt.Sprintf("%s/%d", typ, nRows), func(t *testing.T) {
				x := randVec(nRows*n, uint64(nRows))
				out := make([]float32, nRows*m)
				if err := c.matMul(w, x, nRows, out); err != nil {
					t.Fatal(err)
				}
				xq := make([]byte, quant.ActivationBytes(typ, n))
				for r := 0; r < nRows; r++ {
					if err := quant.QuantizeActivations(typ, x[r*n:(r+1)*n], xq); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < m; i++ {
						want := quant.VecDot(typ, w.Row(i), xq, n)
						got := out[r*m+i]
						if quant.BitExact(typ) && math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("row %d output %d: %.9g, VecDot %.9g", r, i, got, want)
						}
						if d := math.Abs(float64(got - want)); d > 1e-4*(1+math.Abs(float64(want))) {
							t.Fatalf("row %d output %d: %.9g, VecDot %.9g (|Δ| %.3g)", r, i, got, want, d)
						}
					}
				}
			})
		}
	}
}

func TestMatMulShapeErrors(t *testing.T) {
	c := New(1)
	defer c.Close()
	w := testWeight(t, dtype.Q8_0, 64, 4)
	tests := []struct {
		name    string
		x, out  int // lengths
		rows    int
		wantErr bool
	}{
		{"short input", 63, 4, 1, true},
		{"short output", 128, 7, 2, true},
		{"negative rows", 64, 4, -1, true},
		{"no rows", 0, 0, 0, false},
		{"exact", 128, 8, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.matMul(w, make([]float32, tt.x), tt.rows, make([]float32, tt.out))
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error: %v", err, tt.wantErr)
			}
		})
	}
}
