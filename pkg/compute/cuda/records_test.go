package cuda

import (
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// TestRecordsPerChunk: a decode batch of more than mvMaxRows rows runs in
// launches of up to mvMaxRows, each reading the Q8_K records of its own
// rows (q8kRows): every row of a 12-row product and of its gated product
// has the bits of the same row multiplied alone, for each K-quant.
func TestRecordsPerChunk(t *testing.T) {
	const cols, rows, nx = 512, 6, 12
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q5_K, dtype.Q6_K} {
		src := make([]float32, cols*rows)
		for i := range src {
			src[i] = float32(math.Sin(float64(i)*0.37 + float64(typ)))
		}
		rb, err := typ.RowBytes(cols)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, int(rb)*rows)
		if err := quant.Quantize(typ, src, data); err != nil {
			t.Fatal(err)
		}
		gate, err := compute.NewWeight("gate", typ, []int{cols, rows}, data)
		if err != nil {
			t.Fatal(err)
		}
		up, err := compute.NewWeight("up", typ, []int{cols, rows}, append([]byte(nil), data...))
		if err != nil {
			t.Fatal(err)
		}
		b := OpenEmulated(1 << 26)
		for _, w := range []*compute.Weight{gate, up} {
			if err := b.Prepare(w); err != nil {
				t.Fatal(err)
			}
		}
		x := make([]float32, nx*cols)
		for i := range x {
			x[i] = float32(math.Cos(float64(i) * 0.11 * float64(1+i/cols)))
		}
		products := func(n int, xs []float32) (mm, gated []float32) {
			xt, out, h := b.tensor(t, n, cols, xs), b.tensor(t, n, rows, nil), b.tensor(t, n, rows, nil)
			g, u := b.tensor(t, n, rows, nil), b.tensor(t, n, rows, nil)
			if err := b.MatMul(gate, xt, out); err != nil {
				t.Fatal(err)
			}
			if err := b.GatedMatMul(gate, up, xt, g, u, h); err != nil {
				t.Fatal(err)
			}
			return b.rows(t, out, n, rows), b.rows(t, h, n, rows)
		}
		mm, gated := products(nx, x)
		for r := 0; r < nx; r++ {
			one, oneGated := products(1, x[r*cols:(r+1)*cols])
			for c := 0; c < rows; c++ {
				if math.Float32bits(mm[r*rows+c]) != math.Float32bits(one[c]) ||
					math.Float32bits(gated[r*rows+c]) != math.Float32bits(oneGated[c]) {
					t.Fatalf("%s: row %d of %d, output %d: %g and %g gated, alone %g and %g", typ, r, nx, c,
						mm[r*rows+c], gated[r*rows+c], one[c], oneGated[c])
				}
			}
		}
		b.Close()
	}
}

// tensor returns a new n × cols tensor of b holding data (zeros for nil).
func (b *Backend) tensor(t *testing.T, n, cols int, data []float32) compute.Tensor {
	t.Helper()
	x, err := b.NewTensor(n, cols)
	if err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if err := b.Write(x, data); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// rows reads the n rows of cols values of x.
func (b *Backend) rows(t *testing.T, x compute.Tensor, n, cols int) []float32 {
	t.Helper()
	out := make([]float32, n*cols)
	for r := 0; r < n; r++ {
		if err := b.ReadRow(x, r, out[r*cols:(r+1)*cols]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
