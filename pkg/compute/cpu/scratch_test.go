package cpu

import (
	"fmt"
	"math"
	"testing"
)

// TestScratchLends: a buffer given back is lent again (same memory) when
// big enough, replaced when too small, and not kept beyond the size cap or
// the list's length.
func TestScratchLends(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first, n  int
		sameArray bool
	}{
		{"reused", 100, 80, true},
		{"exact", 64, 64, true},
		{"grown", 10, 1000, false},
		{"over the cap", scratchMaxFloats + 1, scratchMaxFloats + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScratch(1)
			a := s.get(tc.first)
			if len(a) != tc.first {
				t.Fatalf("get(%d) has length %d", tc.first, len(a))
			}
			s.put(a)
			b := s.get(tc.n)
			if len(b) != tc.n {
				t.Fatalf("get(%d) has length %d", tc.n, len(b))
			}
			if same := &a[0] == &b[0]; same != tc.sameArray {
				t.Fatalf("second get lent the first buffer: %v, want %v", same, tc.sameArray)
			}
		})
	}
	s := newScratch(1)
	a, b := s.get(8), s.get(8)
	s.put(a)
	s.put(b) // the list holds one: b is dropped
	if c := s.get(8); &c[0] != &a[0] {
		t.Fatal("the list did not keep the first buffer given back")
	}
	if c := s.get(8); &c[0] == &b[0] {
		t.Fatal("the list kept more buffers than its length")
	}
}

// TestAttentionIgnoresDirtyScratch: attention gives the oracle's output
// when every buffer it borrows is full of NaN (what earlier steps leave
// is never read), on the vector path and on the Go path.
func TestAttentionIgnoresDirtyScratch(t *testing.T) {
	for vec := vecNone; vec <= cpuVecISA(); vec++ {
		t.Run(fmt.Sprintf("isa%d", vec), func(t *testing.T) {
			c := New(2)
			defer c.Close()
			c.vec = vec
			for i := 0; i < 2; i++ {
				b := make([]float32, 4096)
				for j := range b {
					b[j] = float32(math.NaN())
				}
				c.floats.put(b)
			}
			kv, spans, a, q := attentionCase(t, 8, 2, 64, true)
			got, want := make([]float32, attnRows*8*64), make([]float32, attnRows*8*64)
			c.Attention(kv, 0, spans, a, &hostTensor{data: q, rows: attnRows, cols: 8 * 64}, &hostTensor{data: got, rows: attnRows, cols: 8 * 64})
			goAttention(kv, spans, a, 0, q, want)
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-5*(1+math.Abs(float64(want[i])))) {
					t.Fatalf("output %d: %.9g, oracle %.9g", i, got[i], want[i])
				}
			}
		})
	}
}
