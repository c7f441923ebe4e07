package tp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// joinAll connects size in-process ranks through a temporary directory.
func joinAll(t *testing.T, size int, timeout time.Duration) []*Ring {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rings := make([]*Ring, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() { rings[r], errs[r] = JoinRing(ctx, dir, r, size, timeout) })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, r := range rings {
			r.Close()
		}
	})
	return rings
}

func TestRingAllReduce(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4} {
		for _, n := range []int{1, 2, 3, 7, 1024, 4099} {
			t.Run(fmt.Sprintf("size%d/n%d", size, n), func(t *testing.T) {
				rings := joinAll(t, size, 5*time.Second)
				rng := rand.New(rand.NewPCG(uint64(size), uint64(n)))
				data := make([][]float32, size)
				want := make([]float64, n)
				for r := range data {
					data[r] = make([]float32, n)
					for i := range data[r] {
						data[r][i] = rng.Float32()*2 - 1
						want[i] += float64(data[r][i])
					}
				}
				for round := 0; round < 3; round++ { // the ring is reusable
					in := make([][]float32, size)
					errs := make([]error, size)
					var wg sync.WaitGroup
					for r := range size {
						in[r] = append([]float32(nil), data[r]...)
						wg.Go(func() { errs[r] = rings[r].AllReduce(in[r]) })
					}
					wg.Wait()
					for r := range size {
						if errs[r] != nil {
							t.Fatalf("rank %d: %v", r, errs[r])
						}
						for i := range n {
							if in[r][i] != in[0][i] {
								t.Fatalf("rank %d value %d = %v, rank 0 has %v: ranks must agree bit for bit", r, i, in[r][i], in[0][i])
							}
							if d := float64(in[r][i]) - want[i]; d > 1e-5 || d < -1e-5 {
								t.Fatalf("value %d = %v, want %v", i, in[r][i], want[i])
							}
						}
					}
				}
			})
		}
	}
}

func TestRingPeerGone(t *testing.T) {
	rings := joinAll(t, 3, 5*time.Second)
	rings[2].Close()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { errs[r] = rings[r].AllReduce(make([]float32, 100)) })
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, ErrRingBroken) {
			t.Errorf("rank %d: got %v, want a broken ring", r, err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failing took %v; a dead peer must fail the ring at once", d)
	}
	if err := rings[0].AllReduce(make([]float32, 1)); !errors.Is(err, ErrRingBroken) {
		t.Errorf("after a failure: %v, want the ring to stay broken", err)
	}
}

func TestRingSilentPeerTimesOut(t *testing.T) {
	rings := joinAll(t, 2, 200*time.Millisecond)
	err := rings[0].AllReduce(make([]float32, 8)) // rank 1 never joins this one
	if !errors.Is(err, ErrRingBroken) {
		t.Fatalf("got %v, want a broken ring after the timeout", err)
	}
}

func TestRingOutOfStep(t *testing.T) {
	rings := joinAll(t, 2, 5*time.Second)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = rings[0].AllReduce(make([]float32, 8)) })
	wg.Go(func() { errs[1] = rings[1].AllReduce(make([]float32, 9)) })
	wg.Wait()
	if errs[0] == nil && errs[1] == nil {
		t.Fatal("ranks reducing different lengths both succeeded")
	}
}

func TestJoinRingNeedsEveryRank(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := JoinRing(ctx, t.TempDir(), 0, 2, time.Second); err == nil {
		t.Fatal("joined a ring of 2 alone")
	}
	if _, err := JoinRing(ctx, t.TempDir(), 2, 2, time.Second); err == nil {
		t.Fatal("rank 2 of 2 accepted")
	}
}
