package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/dtype"
)

// TestMatMulsMatchesMatMul: several weights in one pass give bit for bit
// what one MatMul per weight gives, for weights sharing an activation
// format (Q4_K, Q6_K, Q5_K) and for a mix that does not (Q8_0 beside
// Q4_K, run one by one), at one activation row and several.
func TestMatMulsMatchesMatMul(t *testing.T) {
	c := New(2)
	defer c.Close()
	const n = 256
	for _, types := range [][]dtype.Type{{dtype.Q4_K, dtype.Q6_K, dtype.Q5_K}, {dtype.Q8_0, dtype.Q4_K}, {dtype.F32, dtype.F16}} {
		var ws []*compute.Weight
		for i, typ := range types {
			ws = append(ws, testWeight(t, typ, n, 40+37*i))
		}
		for _, nRows := range []int{1, 5} {
			t.Run(fmt.Sprintf("%v/%d", types, nRows), func(t *testing.T) {
				x, _ := c.NewTensor(nRows, n)
				copy(host(x), randVec(nRows*n, 9))
				var outs, want []compute.Tensor
				for _, w := range ws {
					o, _ := c.NewTensor(nRows, w.Rows())
					outs = append(outs, o)
					o, _ = c.NewTensor(nRows, w.Rows())
					if err := c.MatMul(w, x, o); err != nil {
						t.Fatal(err)
					}
					want = append(want, o)
				}
				if err := c.MatMuls(ws, x, outs); err != nil {
					t.Fatal(err)
				}
				sameProducts(t, "weight", outs, want)
			})
		}
	}
	x, _ := c.NewTensor(1, n)
	bad, _ := c.NewTensor(1, 3)
	if err := c.MatMuls([]*compute.Weight{testWeight(t, dtype.Q8_0, n, 4)}, x, []compute.Tensor{bad}); err == nil {
		t.Error("a wrong output shape was accepted")
	}
}

// TestMatMulPairsMatchesMatMul: several weights, each times its own input,
// in one pass give bit for bit what one MatMul per pair gives: weights of
// different widths sharing an activation format, inputs of different row
// counts, inputs shared by consecutive pairs, and a mix of activation
// formats (run one by one).
func TestMatMulPairsMatchesMatMul(t *testing.T) {
	c := New(2)
	defer c.Close()
	type pair struct {
		typ        dtype.Type
		n, m, rows int
		again      bool // the previous pair's input
	}
	for _, ps := range [][]pair{
		{{dtype.Q4_K, 256, 40, 1, false}, {dtype.Q6_K, 512, 77, 1, false}, {dtype.Q4_K, 256, 64, 1, false}},
		{{dtype.Q8_0, 256, 40, 3, false}, {dtype.Q8_0, 512, 48, 3, false}},
		{{dtype.Q8_0, 256, 40, 1, false}, {dtype.Q4_K, 256, 33, 1, false}},
		{{dtype.Q4_K, 256, 40, 1, false}, {dtype.Q4_K, 256, 33, 2, false}},
		{{dtype.Q4_K, 256, 40, 2, false}, {dtype.Q6_K, 256, 33, 2, true}, {dtype.Q4_K, 512, 16, 3, false}, {dtype.Q4_K, 512, 48, 3, true}},
	} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			var ws []*compute.Weight
			var xs, outs, want []compute.Tensor
			for i, p := range ps {
				w := testWeight(t, p.typ, p.n, p.m)
				x, _ := c.NewTensor(p.rows, p.n)
				copy(host(x), randVec(p.rows*p.n, uint64(20+i)))
				if p.again {
					x = xs[i-1]
				}
				o, _ := c.NewTensor(p.rows, p.m)
				wo, _ := c.NewTensor(p.rows, p.m)
				if err := c.MatMul(w, x, wo); err != nil {
					t.Fatal(err)
				}
				ws, xs, outs, want = append(ws, w), append(xs, x), append(outs, o), append(want, wo)
			}
			if err := c.MatMulPairs(ws, xs, outs); err != nil {
				t.Fatal(err)
			}
			sameProducts(t, "pair", outs, want)
		})
	}
	x, _ := c.NewTensor(1, 256)
	bad, _ := c.NewTensor(1, 3)
	if err := c.MatMulPairs([]*compute.Weight{testWeight(t, dtype.Q8_0, 256, 4)}, []compute.Tensor{x}, []compute.Tensor{bad}); err == nil {
		t.Error("a wrong output shape was accepted")
	}
	if err := c.MatMulPairs([]*compute.Weight{testWeight(t, dtype.Q8_0, 256, 4)}, nil, []compute.Tensor{bad}); err == nil {
		t.Error("a missing input was accepted")
	}
}

// sameProducts fails the test unless every got[i] holds what want[i] holds, bit
// for bit (want from one MatMul per product).
func sameProducts(t *testing.T, what string, got, want []compute.Tensor) {
	t.Helper()
	for i := range got {
		for j, v := range host(got[i]) {
			if math.Float32bits(v) != math.Float32bits(host(want[i])[j]) {
				t.Fatalf("%s %d value %d: %g, MatMul %g", what, i, j, v, host(want[i])[j])
			}
		}
	}
}
