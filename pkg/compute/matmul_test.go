package compute

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// testWeight builds an m×n weight of type t from 64 distinct random rows
// repeated (quantizing every row would make the test slow).
func testWeight(t *testing.T, typ dtype.Type, n, m int) *Weight {
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
	w, err := NewWeight(typ.String(), typ, []int{n, m}, data)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMatMulMatchesVecDot: the range-batched matmul gives bit for bit what
// quant.VecDot gives row by row, for every weight type, for one activation
// row (decode) and several (prefill, over several weight tiles).
func TestMatMulMatchesVecDot(t *testing.T) {
	c := NewCPU(3)
	defer c.Close()
	const n, m = 256, 3000
	for _, typ := range matMulTypes {
		w := testWeight(t, typ, n, m)
		for _, nRows := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", typ, nRows), func(t *testing.T) {
				x := randVec(nRows*n, uint64(nRows))
				out := make([]float32, nRows*m)
				if err := c.MatMul(w, x, nRows, out); err != nil {
					t.Fatal(err)
				}
				xq := make([]byte, quant.ActivationBytes(typ, n))
				for r := 0; r < nRows; r++ {
					if err := quant.QuantizeActivations(typ, x[r*n:(r+1)*n], xq); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < m; i++ {
						want := quant.VecDot(typ, w.Row(i), xq, n)
						if got := out[r*m+i]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("row %d output %d: %.9g, VecDot %.9g", r, i, got, want)
						}
					}
				}
			})
		}
	}
}

func TestMatMulShapeErrors(t *testing.T) {
	c := NewCPU(1)
	defer c.Close()
	w := testWeight(t, dtype.Q8_0, 64, 4)
	if err := c.MatMul(w, make([]float32, 63), 1, make([]float32, 4)); err == nil {
		t.Error("short input accepted")
	}
	if err := c.MatMul(w, make([]float32, 128), 2, make([]float32, 7)); err == nil {
		t.Error("short output accepted")
	}
}
