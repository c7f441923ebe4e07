package cpu

import (
	"sync"
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
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the chunk's panic", r)
			}
		}()
		p.parallelFor(100, 1, func(lo, hi int) { panic("boom") })
	}()
	for i := 0; i < 100; i++ {
		check(64)
	}
}

// TestPoolChunks: the shrinking chunks cover [0, n) exactly once, none
// smaller than minChunk except the last, for loops that run on the caller
// alone and loops that are shared.
func TestPoolChunks(t *testing.T) {
	p := newPool(2)
	defer p.close()
	for _, tc := range []struct{ n, minChunk int }{{1, 1}, {7, 4}, {8, 4}, {100, 1}, {1000, 7}, {4096, 16}, {5, 100}} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		var small int
		p.parallelFor(tc.n, tc.minChunk, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			if hi-lo < tc.minChunk && hi != tc.n {
				small++
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d minChunk=%d: index %d visited %d times", tc.n, tc.minChunk, i, c)
			}
		}
		if small > 0 {
			t.Errorf("n=%d minChunk=%d: %d chunks below the minimum", tc.n, tc.minChunk, small)
		}
	}
}
