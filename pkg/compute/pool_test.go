package compute

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolLoopsAfterParkAndPanic: thousands of back-to-back loops, loops
// after the workers have parked, and loops after a panic all visit every
// index exactly once.
func TestPoolLoopsAfterParkAndPanic(t *testing.T) {
	p := newPool(3)
	defer p.close()
	check := func(n int) {
		t.Helper()
		var sum atomic.Int64
		p.parallelFor(n, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				sum.Add(int64(i))
			}
		})
		if want := int64(n) * int64(n-1) / 2; sum.Load() != want {
			t.Fatalf("n=%d: sum %d, want %d", n, sum.Load(), want)
		}
	}
	for i := 0; i < 5000; i++ {
		check(2 + i%50)
	}
	time.Sleep(20 * time.Millisecond) // the workers stop spinning and park
	check(1000)
	func() {
		defer func() { _ = recover() }()
		p.parallelFor(100, 1, func(lo, hi int) { panic("boom") })
	}()
	for i := 0; i < 100; i++ {
		check(64)
	}
}
