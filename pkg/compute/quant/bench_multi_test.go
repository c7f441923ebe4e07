package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// BenchmarkMatMulRows compares, for 64 weight rows of 1024 elements and
// eight activation rows (a prefill tile), VecDotRows once per activation
// row ("rows") with one VecDotRowsMulti call ("multi"); the figure is
// multiply-adds per second (weight elements × activation rows).
func BenchmarkMatMulRows(b *testing.B) {
	const n, rows, nX = 1024, 64, 8
	r := rand.New(rand.NewPCG(1, 4))
	for _, typ := range []dtype.Type{dtype.Q8_0, dtype.Q4_0, dtype.Q4_K, dtype.Q6_K, dtype.Q5_K, dtype.F32} {
		w, rb, xq, xs := benchOperands(b, r, typ, n, rows, nX)
		out := make([]float32, rows*nX)
		for _, multi := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/multi=%v", typ, multi), func(b *testing.B) {
				b.SetBytes(n * rows * nX)
				for b.Loop() {
					if multi {
						if err := VecDotRowsMulti(typ, w, rb, rows, xq, xs, nX, n, out, rows); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for j := 0; j < nX; j++ {
						if err := VecDotRows(typ, w, rb, rows, xq[j*xs:], n, out[j*rows:]); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// benchOperands builds rows random weight rows of n elements of typ (rb
// bytes each) and nX activation rows quantized for them (xs bytes each).
func benchOperands(b *testing.B, r *rand.Rand, typ dtype.Type, n, rows, nX int) (w []byte, rb int, xq []byte, xs int) {
	b.Helper()
	for i := 0; i < rows; i++ {
		w = append(w, mustQuantize(b, typ, gaussian(r, n, 0.05))...)
	}
	for j := 0; j < nX; j++ {
		xq = append(xq, mustActivations(b, typ, gaussian(r, n, 1))...)
	}
	return w, len(w) / rows, xq, len(xq) / nX
}

// BenchmarkDecodeRows is the decode product: one activation row times a
// weight of rows of 2048 elements on one thread, 32768 rows (larger than
// the caches, so the weights stream from memory as a model's do: "mem")
// and 256 rows (in L2: "cache", the kernel's own speed); the figure is
// weight bytes per second. The package's tests run the AVX2 kernels unless
// HELEXA_CPU_KERNELS says otherwise: HELEXA_CPU_KERNELS=avx512 times the
// VNNI kernels a model uses on this machine.
func BenchmarkDecodeRows(b *testing.B) {
	const n = 2048
	r := rand.New(rand.NewPCG(1, 5))
	for _, typ := range []dtype.Type{dtype.Q4_K, dtype.Q6_K, dtype.Q8_0} {
		row := mustQuantize(b, typ, gaussian(r, n, 0.05))
		xq := mustActivations(b, typ, gaussian(r, n, 1))
		for _, size := range []struct {
			name string
			rows int
		}{{"mem", 32768}, {"cache", 256}} {
			w := make([]byte, 0, len(row)*size.rows)
			for i := 0; i < size.rows; i++ { // distinct bytes per row are not needed for the speed
				w = append(w, row...)
			}
			out := make([]float32, size.rows)
			b.Run(typ.String()+"/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					if err := VecDotRows(typ, w, len(row), size.rows, xq, n, out); err != nil {
						b.Fatal(err)
					}
				}
			})
			if !CanPack(typ, size.rows, n) {
				continue
			}
			p, err := NewPacked(typ, size.rows, n)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Pack(w, len(row), 0, p.Groups()); err != nil {
				b.Fatal(err)
			}
			b.Run(typ.String()+"/packed/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(w))) // the file's bytes, for the same MB/s scale
				for b.Loop() {
					if err := p.MulRows(0, p.Groups(), xq, len(xq), 1, out, size.rows); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
