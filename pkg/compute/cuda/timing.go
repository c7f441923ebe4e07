package cuda

import (
	"fmt"
	"slices"
	"strings"
)

// kernelTime is one kernel's launches and their GPU time (HELEXA_CUDA_TIMES).
type kernelTime struct {
	launches int
	ms       float64
}

// timeTable renders kernel times, largest total first, with the sum and
// the share of span (the GPU time the timed launches covered, idle gaps
// included) the kernels kept the GPU busy.
func timeTable(total map[string]*kernelTime, span float64) string {
	names := make([]string, 0, len(total))
	var all float64
	for n, k := range total {
		names = append(names, n)
		all += k.ms
	}
	slices.SortFunc(names, func(a, b string) int {
		if total[a].ms != total[b].ms {
			if total[a].ms > total[b].ms {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %10s %12s %10s %6s\n", "kernel", "launches", "total ms", "mean µs", "share")
	for _, n := range names {
		k := total[n]
		fmt.Fprintf(&b, "%-28s %10d %12.3f %10.2f %5.1f%%\n", n, k.launches, k.ms, 1000*k.ms/float64(k.launches), 100*k.ms/all)
	}
	fmt.Fprintf(&b, "%-28s %10s %12.3f\n", "all", "", all)
	if span > 0 {
		fmt.Fprintf(&b, "%-28s %10s %12.3f %10s %5.1f%% busy\n", "span", "", span, "", 100*all/span)
	}
	return b.String()
}
