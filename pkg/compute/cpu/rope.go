package cpu

import (
	"math"
	"slices"

	"github.com/helexa/helexa/pkg/compute"
)

// ropeCache fills cs with (cos, sin) pairs for the first r.Dims/2
// frequencies at position pos, computing the angles as ggml-cpu does: a
// float32 recurrence theta_{i+1} = theta_i * base^(-2/dims), divided by the
// frequency factor and multiplied by the linear scale.
func ropeCache(r *compute.Rope, pos int32, cs []float32) {
	thetaScale := float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dims))))
	theta := float32(pos)
	for i := 0; i < r.Dims/2; i++ {
		t := theta
		if r.FreqFactors != nil {
			t /= r.FreqFactors[i]
		}
		t *= r.FreqScale
		cs[2*i] = float32(math.Cos(float64(t)))
		cs[2*i+1] = float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
}

// RoPE implements compute.Backend.
func (c *Backend) RoPE(xT compute.Tensor, pos []int32, heads, headDim int, r *compute.Rope) {
	x := host(xT)
	width := heads * headDim
	cs := c.ropeAngles(r, pos)
	c.pool.parallelFor(len(pos), grain(4*width), func(lo, hi int) {
		if c.vec != vecNone && r.Dims > 0 {
			ropeVec(x[lo*width:hi*width], hi-lo, heads, headDim, cs[lo*r.Dims:hi*r.Dims], r.Dims, r.Mode == compute.RopeNeox)
			return
		}
		for row := lo; row < hi; row++ {
			rc := cs[row*r.Dims : (row+1)*r.Dims]
			for h := 0; h < heads; h++ {
				ropeHead(x[row*width+h*headDim:row*width+(h+1)*headDim], rc, r)
			}
		}
	})
}

// ropeTable is a RoPE configuration's (cos, sin) pairs at a batch's
// positions (ropeCache's, r.Dims values a position). A forward pass
// rotates q and k of every layer at the same positions, and working out
// the angles' cos and sin again for each call was most of RoPE's time.
type ropeTable struct {
	rope    compute.Rope // the configuration, but for its factors
	factors []float32    // a copy of its factors (the caller's may change in place)
	pos     []int32
	cs      []float32
}

// matches reports whether t holds r's angles at pos: every field of the
// configuration equal (the factors by value; TestRoPEAngleTables fails when
// Rope gains a field this does not compare), the same positions.
func (t *ropeTable) matches(r *compute.Rope, pos []int32) bool {
	return t.rope.Mode == r.Mode && t.rope.Dims == r.Dims && t.rope.Base == r.Base &&
		t.rope.FreqScale == r.FreqScale && slices.Equal(t.factors, r.FreqFactors) && slices.Equal(t.pos, pos)
}

// ropeAngles returns the (cos, sin) pairs of r at pos: from one of the
// last two tables worked out (two, for models that alternate two RoPE
// configurations between layers), else a new one, which replaces the
// older.
func (c *Backend) ropeAngles(r *compute.Rope, pos []int32) []float32 {
	for i, t := range c.ropes {
		if t != nil && t.matches(r, pos) {
			c.ropes[0], c.ropes[i] = t, c.ropes[0]
			return t.cs
		}
	}
	t := c.ropes[1]
	if t == nil {
		t = &ropeTable{}
	}
	t.rope = *r
	t.rope.FreqFactors = nil
	t.factors = append(t.factors[:0], r.FreqFactors...)
	t.pos = append(t.pos[:0], pos...)
	t.cs = slices.Grow(t.cs[:0], len(pos)*r.Dims)[:len(pos)*r.Dims]
	c.pool.parallelFor(len(pos), 1, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			ropeCache(r, pos[row], t.cs[row*r.Dims:(row+1)*r.Dims])
		}
	})
	c.ropes[0], c.ropes[1] = t, c.ropes[0]
	return t.cs
}

func ropeHead(v, cs []float32, r *compute.Rope) {
	half := r.Dims / 2
	for i := 0; i < half; i++ {
		a, b := 2*i, 2*i+1
		if r.Mode == compute.RopeNeox {
			a, b = i, i+half
		}
		cos, sin := cs[2*i], cs[2*i+1]
		x0, x1 := v[a], v[b]
		v[a] = x0*cos - x1*sin
		v[b] = x0*sin + x1*cos
	}
}
