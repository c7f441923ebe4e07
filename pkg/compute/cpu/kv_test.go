package cpu

import (
	"fmt"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// TestKVStoreHeadRuns: StoreKV puts each head's values where the store's
// layout says (a store of whole rows, and one kept head by head, F32 and
// F16; a span longer than StoreKV rounds at a time), and head by head a
// head's rows of one block, and of consecutive blocks, follow each other.
func TestKVStoreHeadRuns(t *testing.T) {
	const heads, d, bs, nb = 3, 8, 4, 24
	blocks := []int32{4, 5, 1, 2, 0, 3, 23, 22, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}
	for _, f16 := range []bool{false, true} {
		for _, headDim := range []int{0, d} {
			t.Run(fmt.Sprintf("f16=%v/head_dim%d", f16, headDim), func(t *testing.T) {
				c := New(1)
				defer c.Close()
				kv, err := newKVCache(compute.KVShape{Layers: 2, NumBlocks: nb, BlockSize: bs, KVDim: heads * d, HeadDim: headDim, F16: f16})
				if err != nil {
					t.Fatal(err)
				}
				const pos, n = 2, storeRows + 9
				k, v := randVec(n*kv.KVDim, 7), randVec(n*kv.KVDim, 8)
				span := []compute.SeqSpan{{Row: 0, N: n, Pos: pos, Blocks: blocks}}
				c.StoreKV(kv, 1, span, ht(k, n, kv.KVDim), ht(v, n, kv.KVDim))
				buf := make([]float32, d)
				for i := range n {
					for h := range heads {
						off := kv.offset(blocks, pos+i, h*d)
						if headDim == d {
							b := int(blocks[(pos+i)/bs])
							if want := ((h*nb+b)*bs + (pos+i)%bs) * d; off != want {
								t.Fatalf("position %d head %d at %d, want %d (head major)", pos+i, h, off, want)
							}
						} else if want := (int(blocks[(pos+i)/bs])*bs+(pos+i)%bs)*kv.KVDim + h*d; off != want {
							t.Fatalf("position %d head %d at %d, want %d (whole rows)", pos+i, h, off, want)
						}
						for _, values := range []bool{false, true} {
							src := k
							if values {
								src = v
							}
							got := kv.kvRow(values, 1, off, d, buf)
							for j, x := range src[i*kv.KVDim+h*d:][:d] {
								if f16 {
									x = quant.FP16ToFloat32(quant.Float32ToFP16(x))
								}
								if got[j] != x {
									t.Fatalf("position %d head %d value %d (values=%v): %g, want %g", pos+i, h, j, values, got[j], x)
								}
							}
						}
					}
				}
				if headDim == d {
					// blocks 4 and 5 hold positions 0-3 and 4-7: one run per head
					for h := range heads {
						if a, b := kv.offset(blocks, 3, h*d), kv.offset(blocks, 4, h*d); b != a+d {
							t.Fatalf("head %d: position 4 at %d, position 3 at %d: not one run", h, b, a)
						}
					}
				}
			})
		}
	}
}

// TestKVShapeHeadDim: a head size that does not divide the row is refused.
func TestKVShapeHeadDim(t *testing.T) {
	for _, hd := range []int{-1, 7} {
		if _, err := newKVCache(compute.KVShape{Layers: 1, NumBlocks: 2, BlockSize: 4, KVDim: 16, HeadDim: hd}); err == nil {
			t.Fatalf("head_dim %d of a 16-value row: no error", hd)
		}
	}
}
