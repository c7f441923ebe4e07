package local_test

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// routeRecorder keeps the experts each position and layer chose.
type routeRecorder struct {
	routes map[int]map[int]refRoute // pos → layer → route
}

func (r *routeRecorder) reset() { r.routes = map[int]map[int]refRoute{} }

func (r *routeRecorder) hook(_ executor.SeqID, pos, layer int, experts []int32, probs []float32) {
	if r.routes[pos] == nil {
		r.routes[pos] = map[int]refRoute{}
	}
	r.routes[pos][layer] = refRoute{Experts: append([]int32(nil), experts...), Probs: append([]float32(nil), probs...)}
}

// caseCheck applies the fixtures README's comparison rules to one case.
type caseCheck struct {
	t         *testing.T
	tol       refTolerance
	c         *refCase
	rec       *routeRecorder
	firstDiff int // first position whose routing differs (MaxInt: none)
	routedTo  int // positions [0, routedTo) have been checked for routing
	maxDiff   float64
	compared  int
	matched   int
	forced    int // near-tie steps that followed llama.cpp's token
	routes    int // routing entries compared
}

func (k *caseCheck) run(ex executor.Executor) {
	t, c := k.t, k.c
	ctx := context.Background()
	s, err := executor.NewSession(ex, sampling.Params{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Prefill(ctx, c.Tokens, executor.LogitsAll)
	if err != nil {
		t.Fatal(err)
	}
	n := len(c.Tokens)
	k.checkRouting(n)
	for i, top := range c.Top {
		p := c.TopFirst + i
		k.compareTop(p, res.Logits[p], top, "prompt")
	}
	last := res.Logits[n-1]
	k.checkSampled(res.Token, last, n-1)
	if n-1 < k.firstDiff {
		for id, want := range c.LastLogits {
			k.diff(n-1, "last_logits", id, last[id], float64(want))
		}
	}
	logits := last
	for step, g := range c.Greedy {
		p := n - 1 + step // position whose logits this step samples from
		k.compareTop(p, logits, g.Top5, "greedy")
		got := argmax(logits)
		if got != g.Token {
			if m := margin(g.Top5); m > k.tol.margin || p >= k.firstDiff {
				if p < k.firstDiff {
					t.Errorf("greedy step %d: token %d, llama.cpp %d (margin %.3g > %.3g)", step, got, g.Token, m, k.tol.margin)
				}
				return
			}
			// a near-tie: continue with llama.cpp's token so that the
			// later steps still compare like with like
			got = g.Token
			k.forced++
		} else {
			k.matched++
		}
		if step == len(c.Greedy)-1 {
			return
		}
		r, err := s.Decode(ctx, got)
		if err != nil {
			t.Fatal(err)
		}
		k.checkRouting(n + step + 1)
		logits = r.Logits[0]
		k.checkSampled(r.Token, logits, n+step)
	}
}

// checkSampled checks that the executor's greedy sampler picked the argmax
// of the logits it returned for position p.
func (k *caseCheck) checkSampled(tok int32, logits []float32, p int) {
	if want := argmax(logits); tok != want {
		k.t.Errorf("position %d: greedy sampler chose %d, argmax is %d", p, tok, want)
	}
}

// checkRouting compares the routing of positions up to end with
// llama.cpp's, recording the first difference and failing when its gap is
// too large to be rounding.
func (k *caseCheck) checkRouting(end int) {
	if k.c.MoE == nil || k.rec == nil {
		return // no reference routing, or none observable (a runner process)
	}
	n := len(k.c.Tokens)
	for ; k.routedTo < end && k.firstDiff == math.MaxInt; k.routedTo++ {
		p := k.routedTo
		var want []*refRoute
		switch {
		case p < n:
			want = k.c.MoE.Prompt[p]
		case p-n < len(k.c.MoE.GreedyFed):
			want = k.c.MoE.GreedyFed[p-n]
		}
		for layer, w := range want {
			if w == nil {
				continue
			}
			got, ok := k.rec.routes[p][layer]
			if !ok {
				k.t.Fatalf("no routing recorded for position %d layer %d", p, layer)
			}
			k.routes++
			if sameSet(got.Experts, w.Experts) {
				continue
			}
			k.firstDiff = p
			if gap := routerGap(w.Probs, len(w.Experts)); gap > moeGap {
				k.t.Errorf("position %d layer %d: experts %v, llama.cpp %v with a %.4f probability gap (> %.2f)",
					p, layer, got.Experts, w.Experts, gap, moeGap)
			}
			return
		}
	}
}

// compareTop checks stored [id, logit] pairs and the top-1 at position p.
func (k *caseCheck) compareTop(p int, logits []float32, top []refPair, what string) {
	if p >= k.firstDiff {
		return
	}
	for _, pr := range top {
		k.diff(p, what, int(pr[0]), logits[int(pr[0])], pr[1])
	}
	if m := margin(top); m > k.tol.margin {
		if got := argmax(logits); got != int32(top[0][0]) {
			k.t.Errorf("%s position %d: top-1 %d, llama.cpp %d (margin %.3g)", what, p, got, int32(top[0][0]), m)
		}
	}
}

func (k *caseCheck) diff(p int, what string, id int, got float32, want float64) {
	d := math.Abs(float64(got) - want)
	k.compared++
	k.maxDiff = max(k.maxDiff, d)
	if d > k.tol.logit || math.IsNaN(d) {
		k.t.Errorf("%s position %d token %d: logit %g, llama.cpp %g (|Δ| %.3g > %.3g)", what, p, id, got, want, d, k.tol.logit)
	}
}

func margin(top []refPair) float64 {
	if len(top) < 2 {
		return math.Inf(1)
	}
	return top[0][1] - top[1][1]
}

func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}

func sameSet(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			return false
		}
	}
	return true
}

// routerGap is the difference between the k-th and (k+1)-th largest
// probability.
func routerGap(probs []float32, k int) float64 {
	p := append([]float32(nil), probs...)
	sort.Slice(p, func(i, j int) bool { return p[i] > p[j] })
	if k >= len(p) {
		return math.Inf(1)
	}
	return float64(p[k-1] - p[k])
}
