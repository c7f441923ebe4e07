package cpu

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/dtype"
)

func TestParallelFor(t *testing.T) {
	p := newPool(3)
	defer p.close()
	for _, n := range []int{0, 1, 7, 100, 1001} {
		hits := make([]atomic.Int32, n)
		p.parallelFor(n, 2, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, h)
			}
		}
	}
}

func TestParallelForPanic(t *testing.T) {
	p := newPool(2)
	defer p.close()
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the worker's panic", r)
		}
	}()
	p.parallelFor(1000, 1, func(lo, hi int) {
		if lo <= 500 && 500 < hi {
			panic("boom")
		}
	})
	t.Error("panic not propagated")
}

func TestRoPE(t *testing.T) {
	tests := []struct {
		name string
		r    compute.Rope
	}{
		{"norm", compute.Rope{Mode: compute.RopeNorm, Dims: 8, Base: 10000, FreqScale: 1}},
		{"neox", compute.Rope{Mode: compute.RopeNeox, Dims: 8, Base: 1e6, FreqScale: 1}},
		{"partial linear", compute.Rope{Mode: compute.RopeNorm, Dims: 4, Base: 10000, FreqScale: 0.25}},
		{"freq factors", compute.Rope{Mode: compute.RopeNeox, Dims: 8, Base: 500000, FreqScale: 1, FreqFactors: []float32{1, 2, 4, 8}}},
	}
	c := New(2)
	defer c.Close()
	const heads, hd = 2, 8
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos := []int32{0, 3, 77}
			x := randVec(len(pos)*heads*hd, 1)
			orig := append([]float32(nil), x...)
			c.RoPE(ht(x, len(pos), heads*hd), pos, heads, hd, &tt.r)
			for row, p := range pos {
				for h := 0; h < heads; h++ {
					base := row*heads*hd + h*hd
					want := ropeRef(orig[base:base+hd], float64(p), &tt.r)
					for i := range want {
						if d := math.Abs(float64(x[base+i]) - want[i]); d > 1e-4 {
							t.Fatalf("pos %d head %d elem %d: %g, want %g", p, h, i, x[base+i], want[i])
						}
					}
				}
			}
		})
	}
}

// TestRoPEAngleTables: RoPE's kept angle tables give every call the bits
// a fresh backend gives it: the same positions again, other positions,
// two configurations in turns, and factors changed in place.
func TestRoPEAngleTables(t *testing.T) {
	if n := reflect.TypeFor[compute.Rope]().NumField(); n != 5 {
		t.Fatalf("Rope has %d fields: compare the new ones in ropeTable.matches, then update this count", n)
	}
	c := New(2)
	defer c.Close()
	const heads, hd = 2, 8
	factors := []float32{1, 2, 4, 8}
	r1 := compute.Rope{Mode: compute.RopeNeox, Dims: 8, Base: 1e6, FreqScale: 1, FreqFactors: factors}
	r2 := compute.Rope{Mode: compute.RopeNeox, Dims: 8, Base: 1e4, FreqScale: 1}
	calls := []struct {
		r   *compute.Rope
		pos []int32
		mut func()
	}{
		{&r1, []int32{0, 3, 77}, nil}, {&r1, []int32{0, 3, 77}, nil}, {&r2, []int32{0, 3, 77}, nil},
		{&r1, []int32{0, 3, 77}, nil}, {&r1, []int32{5}, nil}, {&r2, []int32{5}, nil},
		{&r1, []int32{5}, func() { factors[2] = 3 }}, {&r1, []int32{0, 3, 78}, nil},
	}
	for i, call := range calls {
		if call.mut != nil {
			call.mut()
		}
		x := randVec(len(call.pos)*heads*hd, uint64(i))
		want := append([]float32(nil), x...)
		fresh := New(1)
		fresh.RoPE(ht(want, len(call.pos), heads*hd), call.pos, heads, hd, call.r)
		fresh.Close()
		c.RoPE(ht(x, len(call.pos), heads*hd), call.pos, heads, hd, call.r)
		for k := range x {
			if math.Float32bits(x[k]) != math.Float32bits(want[k]) {
				t.Fatalf("call %d: value %d is %g, a fresh backend gives %g", i, k, x[k], want[k])
			}
		}
	}
}

// ropeRef is RoPE from its definition, in float64.
func ropeRef(v []float32, pos float64, r *compute.Rope) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = float64(v[i])
	}
	for i := 0; i < r.Dims/2; i++ {
		theta := pos * math.Pow(float64(r.Base), -2*float64(i)/float64(r.Dims)) * float64(r.FreqScale)
		if r.FreqFactors != nil {
			theta /= float64(r.FreqFactors[i])
		}
		a, b := 2*i, 2*i+1
		if r.Mode == compute.RopeNeox {
			a, b = i, i+r.Dims/2
		}
		x0, x1 := float64(v[a]), float64(v[b])
		out[a] = x0*math.Cos(theta) - x1*math.Sin(theta)
		out[b] = x0*math.Sin(theta) + x1*math.Cos(theta)
	}
	return out
}

// TestAttention compares paged GQA attention with a direct computation
// over contiguous keys, over a store of whole rows and one kept head by
// head, on the vector and the Go kernels.
func TestAttention(t *testing.T) {
	a := compute.Attn{Heads: 4, KVHeads: 2, HeadDim: 8, Scale: 1 / float32(math.Sqrt(8))}
	for _, tc := range []struct {
		name    string
		headDim int
		vec     bool
	}{{"rows", 0, true}, {"heads", a.HeadDim, true}, {"rows/go", 0, false}, {"heads/go", a.HeadDim, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(2)
			defer c.Close()
			if !tc.vec {
				c.vec = vecNone
			}
			kv, err := newKVCache(compute.KVShape{Layers: 1, NumBlocks: 8, BlockSize: 4, KVDim: a.KVHeads * a.HeadDim, HeadDim: tc.headDim})
			if err != nil {
				t.Fatal(err)
			}
			attentionMatchesRef(t, c, kv, &a)
		})
	}
}

func attentionMatchesRef(t *testing.T, c *Backend, kv *KVCache, a *compute.Attn) {
	const n = 11
	blocks := []int32{5, 1, 7} // non-contiguous pages
	k, v := randVec(n*kv.KVDim, 2), randVec(n*kv.KVDim, 3)
	q := randVec(n*a.Heads*a.HeadDim, 4)
	// positions 0..5 first, then 6..10 as a second chunk
	spans1 := []compute.SeqSpan{{Row: 0, N: 6, Pos: 0, Blocks: blocks}}
	c.StoreKV(kv, 0, spans1, ht(k[:6*kv.KVDim], 6, kv.KVDim), ht(v[:6*kv.KVDim], 6, kv.KVDim))
	spans2 := []compute.SeqSpan{{Row: 0, N: 5, Pos: 6, Blocks: blocks}}
	c.StoreKV(kv, 0, spans2, ht(k[6*kv.KVDim:], 5, kv.KVDim), ht(v[6*kv.KVDim:], 5, kv.KVDim))
	out := make([]float32, 5*a.Heads*a.HeadDim)
	c.Attention(kv, 0, spans2, a, ht(q[6*a.Heads*a.HeadDim:], 5, a.Heads*a.HeadDim), ht(out, 5, a.Heads*a.HeadDim))
	for tok := 0; tok < 5; tok++ {
		p := 6 + tok
		for h := 0; h < a.Heads; h++ {
			want := attnRef(q[(p*a.Heads+h)*a.HeadDim:][:a.HeadDim], k, v, p, h/2, a, kv.KVDim)
			got := out[(tok*a.Heads+h)*a.HeadDim:][:a.HeadDim]
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-5 {
					t.Fatalf("pos %d head %d: %v, want %v", p, h, got, want)
				}
			}
		}
	}
}

func attnRef(q, k, v []float32, p, kvh int, a *compute.Attn, kvDim int) []float64 {
	s := make([]float64, p+1)
	m := math.Inf(-1)
	for j := range s {
		for i := range q {
			s[j] += float64(q[i]) * float64(k[j*kvDim+kvh*a.HeadDim+i])
		}
		s[j] *= float64(a.Scale)
		m = math.Max(m, s[j])
	}
	sum := 0.0
	for j := range s {
		s[j] = math.Exp(s[j] - m)
		sum += s[j]
	}
	out := make([]float64, a.HeadDim)
	for j := range s {
		for i := range out {
			out[i] += s[j] / sum * float64(v[j*kvDim+kvh*a.HeadDim+i])
		}
	}
	return out
}

func TestMoERoute(t *testing.T) {
	c := New(1)
	defer c.Close()
	logits := []float32{0, 2, 1, 2, -1, 0, 0, 3}
	probs, ex, w := make([]float32, 8), make([]int32, 4), make([]float32, 4)
	c.MoERoute(ht(logits, 2, 4), 2, ht(probs, 2, 4), ex, w)
	if ex[0] != 1 || ex[1] != 3 || ex[2] != 3 || ex[3] != 1 {
		t.Errorf("experts %v, want [1 3 3 1] (ties to the lower id)", ex)
	}
	if math.Abs(float64(w[0]-0.5)) > 1e-6 || math.Abs(float64(w[0]+w[1]-1)) > 1e-6 || math.Abs(float64(w[2]+w[3]-1)) > 1e-6 {
		t.Errorf("weights %v do not sum to 1 per row", w)
	}
	var sum float32
	for _, p := range probs[:4] {
		sum += p
	}
	if math.Abs(float64(sum-1)) > 1e-6 {
		t.Errorf("probabilities %v do not sum to 1", probs[:4])
	}
}

func TestCheckSpan(t *testing.T) {
	kv, err := NewKVCache(1, 4, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s  compute.SeqSpan
		ok bool
	}{
		{compute.SeqSpan{N: 8, Blocks: []int32{3}}, true},
		{compute.SeqSpan{N: 9, Blocks: []int32{3}}, false},
		{compute.SeqSpan{Pos: 8, N: 1, Blocks: []int32{0, 4}}, false},
		{compute.SeqSpan{Pos: 8, N: 8, Blocks: []int32{0, 2, 9}}, true}, // the unused third block is not checked
	}
	for _, tt := range tests {
		if err := kv.CheckSpan(tt.s); (err == nil) != tt.ok {
			t.Errorf("%+v: err %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
}

// ht wraps host values as a CPU tensor.
func ht(data []float32, rows, cols int) compute.Tensor {
	return &hostTensor{data: data[:rows*cols], rows: rows, cols: cols}
}

func randVec(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestRowOps checks the row-moving ops the architectures use for MoE,
// biases and logits rows against direct loops.
func TestRowOps(t *testing.T) {
	c := New(1)
	defer c.Close()
	src := ht([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	dst := ht(make([]float32, 4), 2, 2)
	c.GatherRows(src, []int32{2, 0}, dst)
	if got := host(dst); !slices.Equal(got, []float32{5, 6, 1, 2}) {
		t.Errorf("GatherRows: %v", got)
	}
	slots := ht([]float32{9, 9, 9, 9, 9, 9, 9, 9}, 4, 2)
	c.ScaleRowsTo(dst, []int32{3, 0}, []float32{2, 0.5}, slots)
	if got := host(slots); !slices.Equal(got, []float32{0.5, 1, 9, 9, 9, 9, 10, 12}) {
		t.Errorf("ScaleRowsTo: %v", got)
	}
	out := ht(make([]float32, 4), 2, 2)
	c.SumRowGroups(slots, 2, out)
	if got := host(out); !slices.Equal(got, []float32{9.5, 10, 19, 21}) {
		t.Errorf("SumRowGroups: %v", got)
	}
	c.AddRow(out, &compute.Vector{Data: []float32{1, -1}})
	if got := host(out); !slices.Equal(got, []float32{10.5, 9, 20, 20}) {
		t.Errorf("AddRow: %v", got)
	}
	v := c.View(src, 2, 3)
	row := make([]float32, 3)
	if err := c.ReadRow(v, 1, row); err != nil || !slices.Equal(row, []float32{4, 5, 6}) {
		t.Errorf("ReadRow of a 2 × 3 view: %v %v", row, err)
	}
	if err := c.ReadRow(v, 2, row); err == nil {
		t.Error("ReadRow past the last row accepted")
	}
	if err := c.Write(v, []float32{1}); err == nil {
		t.Error("Write of the wrong length accepted")
	}
	if err := c.MatMul(mustWeight(t), src, out); err == nil {
		t.Error("MatMul with mismatched shapes accepted")
	}
}

func mustWeight(t *testing.T) *compute.Weight {
	w, err := compute.NewWeight("w", dtype.F32, []int{4, 3}, make([]byte, 48))
	if err != nil {
		t.Fatal(err)
	}
	return w
}
