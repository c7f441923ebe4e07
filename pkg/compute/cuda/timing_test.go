package cuda

import (
	"strings"
	"testing"
)

func TestTimeTable(t *testing.T) {
	got := timeTable(map[string]*kernelTime{
		"hx_b":  {launches: 4, ms: 2},
		"hx_a":  {launches: 2, ms: 2},
		"hx_mv": {launches: 10, ms: 6},
	}, 20)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want a header, three kernels, all and span:\n%s", len(lines), got)
	}
	for i, want := range []string{"kernel", "hx_mv", "hx_a", "hx_b", "all", "span"} {
		if f := strings.Fields(lines[i]); f[0] != want {
			t.Errorf("line %d starts %q, want %q (largest total first, ties by name)", i, f[0], want)
		}
	}
	for _, want := range []string{"600.00", "60.0%", "10.000", "50.0% busy"} { // mean µs of hx_mv, its share, all, busy
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}
