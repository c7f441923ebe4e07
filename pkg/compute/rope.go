package compute

import "math"

// ropeCache fills cs with (cos, sin) pairs for the first r.Dims/2
// frequencies at position pos, computing the angles as ggml-cpu does: a
// float32 recurrence theta_{i+1} = theta_i * base^(-2/dims), divided by the
// frequency factor and multiplied by the linear scale.
func ropeCache(r *Rope, pos int32, cs []float32) {
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

// RoPE implements Backend.
func (c *CPU) RoPE(xT Tensor, pos []int32, heads, headDim int, r *Rope) {
	x := host(xT)
	width := heads * headDim
	c.pool.parallelFor(len(pos), grain(4*width), func(lo, hi int) {
		cs := make([]float32, r.Dims)
		for row := lo; row < hi; row++ {
			ropeCache(r, pos[row], cs)
			for h := 0; h < heads; h++ {
				ropeHead(x[row*width+h*headDim:row*width+(h+1)*headDim], cs, r)
			}
		}
	})
}

func ropeHead(v, cs []float32, r *Rope) {
	half := r.Dims / 2
	for i := 0; i < half; i++ {
		a, b := 2*i, 2*i+1
		if r.Mode == RopeNeox {
			a, b = i, i+half
		}
		cos, sin := cs[2*i], cs[2*i+1]
		x0, x1 := v[a], v[b]
		v[a] = x0*cos - x1*sin
		v[b] = x0*sin + x1*cos
	}
}
