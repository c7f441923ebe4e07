package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/helexa/helexa/pkg/compute"
)

// naiveDeltaNet is the gated delta rule written from its definition in
// float64, one sequence, with S as a value × key matrix.
func naiveDeltaNet(qkv, alpha, beta []float32, rows int, d *compute.DeltaNet, s [][][]float64) []float64 {
	dim, kh, vh := d.Dim, d.KHeads, d.VHeads
	width := (2*kh + vh) * dim
	out := make([]float64, rows*vh*dim)
	norm := func(x []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		n := math.Max(math.Sqrt(ss), float64(d.Eps))
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(v) / n
		}
		return y
	}
	for r := 0; r < rows; r++ {
		row := qkv[r*width : (r+1)*width]
		for h := 0; h < vh; h++ {
			g := h % kh
			if d.Grouped {
				g = h / (vh / kh)
			}
			q := norm(row[g*dim : (g+1)*dim])
			k := norm(row[(kh+g)*dim : (kh+g+1)*dim])
			v := row[(2*kh+h)*dim : (2*kh+h+1)*dim]
			a := float64(alpha[r*vh+h] + d.DtBias.Data[h])
			decay := math.Exp(math.Log1p(math.Exp(a)) * float64(d.A.Data[h]))
			b := 1 / (1 + math.Exp(-float64(beta[r*vh+h])))
			S := s[h]
			for j := range S {
				var sk float64
				for i := range S[j] {
					S[j][i] *= decay
					sk += S[j][i] * k[i]
				}
				dj := (float64(v[j]) - sk) * b
				for i := range S[j] {
					S[j][i] += dj * k[i]
				}
			}
			for j := range S {
				var o float64
				for i := range S[j] {
					o += S[j][i] * q[i]
				}
				out[r*vh*dim+h*dim+j] = o / math.Sqrt(float64(dim))
			}
		}
	}
	return out
}

func randVals(rng *rand.Rand, n int, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * std)
	}
	return v
}

// TestGatedDeltaNet checks the CPU kernels (the Go one and, where the CPU
// has it, the vector one) against the definition, with the tokens fed in
// one span and in pieces across calls (the state carries).
func TestGatedDeltaNet(t *testing.T) {
	for vec := vecNone; vec <= cpuVecISA(); vec++ {
		testGatedDeltaNet(t, vec)
	}
}

func testGatedDeltaNet(t *testing.T, vec vecISA) {
	for _, tc := range []struct {
		name              string
		kh, vh, dim, rows int
		pieces            []int
		grouped           bool
	}{
		{"one span", 2, 4, 16, 9, []int{9}, false},
		{"pieces", 2, 4, 16, 9, []int{4, 1, 4}, false},
		{"equal heads", 3, 3, 8, 5, []int{2, 3}, false},
		{"one token", 1, 2, 32, 1, []int{1}, false},
		{"wide heads", 2, 6, 128, 70, []int{64, 6}, false},
		{"wider than a block", 1, 1, 48, 3, []int{3}, false},
		{"grouped heads", 2, 6, 16, 5, []int{3, 2}, true},
	} {
		t.Run(fmt.Sprintf("%s/vector=%d", tc.name, vec), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := New(2)
			defer c.Close()
			c.vec = vec
			d := &compute.DeltaNet{KHeads: tc.kh, VHeads: tc.vh, Dim: tc.dim, Eps: 1e-6, Grouped: tc.grouped,
				DtBias: &compute.Vector{Data: randVals(rng, tc.vh, 1)}, A: &compute.Vector{Data: randVals(rng, tc.vh, 1)}}
			for i := range d.A.Data {
				d.A.Data[i] = -float32(math.Abs(float64(d.A.Data[i])))
			}
			width := (2*tc.kh + tc.vh) * tc.dim
			qkv := randVals(rng, tc.rows*width, 1)
			alpha, beta := randVals(rng, tc.rows*tc.vh, 1), randVals(rng, tc.rows*tc.vh, 1)
			S := make([][][]float64, tc.vh)
			for h := range S {
				S[h] = make([][]float64, tc.dim)
				for j := range S[h] {
					S[h][j] = make([]float64, tc.dim)
				}
			}
			want := naiveDeltaNet(qkv, alpha, beta, tc.rows, d, S)

			state, _ := c.NewTensor(tc.vh*tc.dim, tc.dim)
			got := make([]float32, 0, tc.rows*tc.vh*tc.dim)
			row := 0
			for _, n := range tc.pieces {
				q, _ := c.NewTensor(n, width)
				a, _ := c.NewTensor(n, tc.vh)
				b, _ := c.NewTensor(n, tc.vh)
				o, _ := c.NewTensor(n, tc.vh*tc.dim)
				copy(host(q), qkv[row*width:])
				copy(host(a), alpha[row*tc.vh:])
				copy(host(b), beta[row*tc.vh:])
				c.GatedDeltaNet(q, a, b, []compute.SeqSpan{{Row: 0, N: n, Pos: row}}, []compute.Tensor{state}, d, o)
				got = append(got, host(o)...)
				row += n
			}
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-4 {
					t.Fatalf("out[%d] = %g, want %g", i, got[i], want[i])
				}
			}
			for h := range S {
				for j := range S[h] {
					for i := range S[h][j] {
						if g := host(state)[(h*tc.dim+j)*tc.dim+i]; math.Abs(float64(g)-S[h][j][i]) > 1e-4 {
							t.Fatalf("state[%d][%d][%d] = %g, want %g", h, j, i, g, S[h][j][i])
						}
					}
				}
			}
		})
	}
}

// TestGatedDeltaNetTwoSequences runs two sequences in one batch and checks
// each against its own run alone.
func TestGatedDeltaNetTwoSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := New(2)
	defer c.Close()
	d := &compute.DeltaNet{KHeads: 1, VHeads: 2, Dim: 8, Eps: 1e-6,
		DtBias: &compute.Vector{Data: []float32{0.1, -0.2}}, A: &compute.Vector{Data: []float32{-0.5, -1.5}}}
	width := (2*d.KHeads + d.VHeads) * d.Dim
	rows := 7
	qkv := randVals(rng, rows*width, 1)
	alpha, beta := randVals(rng, rows*2, 1), randVals(rng, rows*2, 1)
	run := func(spans []compute.SeqSpan) []float32 {
		q, _ := c.NewTensor(rows, width)
		a, _ := c.NewTensor(rows, 2)
		b, _ := c.NewTensor(rows, 2)
		o, _ := c.NewTensor(rows, 2*d.Dim)
		copy(host(q), qkv)
		copy(host(a), alpha)
		copy(host(b), beta)
		states := make([]compute.Tensor, len(spans))
		for i := range states {
			states[i], _ = c.NewTensor(2*d.Dim, d.Dim)
		}
		c.GatedDeltaNet(q, a, b, spans, states, d, o)
		return host(o)
	}
	both := run([]compute.SeqSpan{{Row: 0, N: 3}, {Row: 3, N: 4}})
	first := run([]compute.SeqSpan{{Row: 0, N: 3}})
	second := run([]compute.SeqSpan{{Row: 3, N: 4}})
	for i := 0; i < 3*2*d.Dim; i++ {
		if both[i] != first[i] {
			t.Fatalf("sequence 1 out[%d] = %g batched, %g alone", i, both[i], first[i])
		}
	}
	for i := 3 * 2 * d.Dim; i < rows*2*d.Dim; i++ {
		if both[i] != second[i] {
			t.Fatalf("sequence 2 out[%d] = %g batched, %g alone", i, both[i], second[i])
		}
	}
}

// TestConvSiLU checks the convolution (the Go kernel and, where the CPU
// has it, the vector one) against its definition, fed whole and in pieces.
func TestConvSiLU(t *testing.T) {
	for vec := vecNone; vec <= cpuVecISA(); vec++ {
		for _, ch := range []int{6, 40} {
			t.Run(fmt.Sprintf("channels=%d/vector=%d", ch, vec), func(t *testing.T) { testConvSiLU(t, ch, vec) })
		}
	}
}

func testConvSiLU(t *testing.T, ch int, vec vecISA) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := New(2)
	defer c.Close()
	c.vec = vec
	const k, rows = 4, 7
	x := randVals(rng, rows*ch, 1)
	w := &compute.Vector{Data: randVals(rng, ch*k, 1)}
	want := make([]float64, rows*ch)
	for tm := 0; tm < rows; tm++ {
		for cc := 0; cc < ch; cc++ {
			var s float64
			for j := 0; j < k; j++ {
				if src := tm - (k - 1) + j; src >= 0 {
					s += float64(x[src*ch+cc]) * float64(w.Data[j*ch+cc])
				}
			}
			want[tm*ch+cc] = s / (1 + math.Exp(-s))
		}
	}
	for _, pieces := range [][]int{{7}, {1, 1, 5}, {2, 5}, {6, 1}} {
		state, _ := c.NewTensor(k-1, ch)
		var got []float32
		row := 0
		for _, n := range pieces {
			xt, _ := c.NewTensor(n, ch)
			o, _ := c.NewTensor(n, ch)
			copy(host(xt), x[row*ch:])
			c.ConvSiLU(xt, []compute.SeqSpan{{N: n, Pos: row}}, []compute.Tensor{state}, w, o)
			got = append(got, host(o)...)
			row += n
		}
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5 {
				t.Fatalf("pieces %v: out[%d] = %g, want %g", pieces, i, got[i], want[i])
			}
		}
	}
}

func TestSplitHeadsAndSigmoidMul(t *testing.T) {
	c := New(1)
	defer c.Close()
	src, _ := c.NewTensor(1, 6)
	copy(host(src), []float32{1, 2, 3, 4, 5, 6})
	a, _ := c.NewTensor(1, 4)
	b, _ := c.NewTensor(1, 2)
	c.SplitHeads(src, 2, 2, a, b)
	if got := host(a); got[0] != 1 || got[1] != 2 || got[2] != 4 || got[3] != 5 {
		t.Fatalf("first parts %v", got)
	}
	if got := host(b); got[0] != 3 || got[1] != 6 {
		t.Fatalf("second parts %v", got)
	}
	g, _ := c.NewTensor(1, 2)
	copy(host(g), []float32{0, 100})
	c.SigmoidMul(b, g)
	if got := host(b); got[0] != 1.5 || got[1] != 6 {
		t.Fatalf("sigmoid-gated %v", got)
	}
}
