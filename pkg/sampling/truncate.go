package sampling

import (
	"math"
	"slices"
)

// truncate applies top-k, top-p and min-p (in llama.cpp's order) to c.
//
// top-p and min-p both keep a prefix of the candidates sorted by logit, so
// min-p can be applied first as a cheap filter as long as top-p's cumulative
// mass is normalised over the set before min-p, exactly as when top-p runs
// first. Only the survivors are ever sorted.
func (s *Sampler) truncate(c []cand) []cand {
	sorted := false
	if k := s.p.TopK; k > 0 && k < len(c) {
		c = s.topK(c, k)
		sorted = true
	}
	topP := s.p.TopP > 0 && s.p.TopP < 1
	minP := s.p.MinP > 0
	if !topP && !minP {
		return c
	}
	m := maxLogit(c)
	thr := float32(math.Inf(-1))
	if minP {
		thr = m + float32(math.Log(float64(s.p.MinP)))
	}
	if !topP {
		return filterAbove(c, thr, func(cand) bool { return true })
	}
	p := float64(s.p.TopP)
	if sorted {
		var z float64
		for _, x := range c {
			z += expRel(x.logit, m)
		}
		return cutTopP(filterAbove(c, thr, func(cand) bool { return true }), m, z, p)
	}
	// One pass builds a histogram of probability mass by distance below
	// the max (and the normaliser z); only the tokens in buckets up to the
	// one where the mass crosses p can be kept, and only they are sorted.
	last, z := s.histogram(c, m, p)
	c = filterAbove(c, thr, func(x cand) bool { return bucketOf(x.logit, m) <= last })
	sortCands(c)
	return cutTopP(c, m, z, p)
}

// filterAbove keeps, in place and in order, the candidates with logit >= thr
// for which keep is true.
func filterAbove(c []cand, thr float32, keep func(cand) bool) []cand {
	n := 0
	for _, x := range c {
		if x.logit >= thr && keep(x) {
			c[n] = x
			n++
		}
	}
	return c[:n]
}

// cutTopP keeps the shortest prefix of the sorted candidates whose mass,
// normalised by z, reaches p (at least one token).
func cutTopP(c []cand, m float32, z, p float64) []cand {
	var cum float64
	for i, x := range c {
		cum += expRel(x.logit, m)
		if cum >= p*z {
			return c[:i+1]
		}
	}
	return c
}

func maxLogit(c []cand) float32 {
	m := c[0].logit
	for _, x := range c[1:] {
		m = max(m, x.logit)
	}
	return m
}

// expRel is exp(x-m), 0 for values far below m.
func expRel(x, m float32) float64 {
	if x <= m-expCutoff {
		return 0
	}
	return math.Exp(float64(x - m))
}

// topK returns the k best candidates, sorted best first, using a bounded
// min-heap (O(n log k)).
func (s *Sampler) topK(c []cand, k int) []cand {
	if cap(s.heap) < k {
		s.heap = make([]cand, 0, k)
	}
	h := s.heap[:0]
	for _, x := range c {
		if len(h) < k {
			h = append(h, x)
			siftUp(h, len(h)-1)
		} else if better(x, h[0]) {
			h[0] = x
			siftDown(h, 0)
		}
	}
	sortCands(h)
	return h
}

// The heap keeps the worst candidate at the root.
func siftUp(h []cand, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []cand, i int) {
	for {
		w := i
		if l := 2*i + 1; l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r := 2*i + 2; r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func sortCands(c []cand) {
	slices.SortFunc(c, func(a, b cand) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
}

// topPBuckets is the resolution of the histogram that narrows top-p's sort.
const topPBuckets = 1024

// histogram sums exp(logit-m) per bucket of distance below m and returns
// the first bucket at which the cumulative mass reaches p of the total, and
// the total z.
func (s *Sampler) histogram(c []cand, m float32, p float64) (last int, z float64) {
	if cap(s.buckets) < topPBuckets {
		s.buckets = make([]float64, topPBuckets)
	}
	b := s.buckets[:topPBuckets]
	clear(b)
	for _, x := range c {
		b[bucketOf(x.logit, m)] += expRel(x.logit, m)
	}
	for _, v := range b {
		z += v
	}
	last = topPBuckets - 1
	var cum float64
	for i, v := range b {
		cum += v
		if cum >= p*z {
			return i, z
		}
	}
	return last, z
}

// bucketOf maps a logit to its histogram bucket by its distance below m.
func bucketOf(x, m float32) int {
	d := float64(m-x) * (topPBuckets / expCutoff)
	if d >= topPBuckets-1 {
		return topPBuckets - 1
	}
	return max(int(d), 0)
}

// draw applies the temperature and draws a token from softmax(c/T).
func (s *Sampler) draw(c []cand) int32 {
	if len(c) == 1 {
		return c[0].id
	}
	m := maxLogit(c)
	invT := 1 / float64(s.p.Temperature)
	if cap(s.probs) < len(c) {
		s.probs = make([]float64, len(c))
	}
	probs := s.probs[:len(c)]
	var total float64
	for i, x := range c {
		probs[i] = math.Exp(float64(x.logit-m) * invT)
		total += probs[i]
	}
	u := s.rng.Float64() * total
	for i, p := range probs {
		u -= p
		if u < 0 {
			return c[i].id
		}
	}
	// Rounding left u >= 0: take the last token with non-zero probability.
	for i := len(c) - 1; i > 0; i-- {
		if probs[i] > 0 {
			return c[i].id
		}
	}
	return c[0].id
}
