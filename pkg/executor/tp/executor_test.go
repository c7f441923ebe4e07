package tp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/sampling"
)

// fakeRank is a rank of any device: it records the works it ran and the
// options it was opened with; Check refuses works with a negative Pos.
type fakeRank struct {
	opts    executor.LoadOptions
	proc    string
	mu      sync.Mutex
	steps   [][]executor.Work
	nextSeq executor.SeqID
	closed  bool
	// a worker's process: exit closes exited
	exited chan struct{}
	ring   *Ring
}

func (f *fakeRank) Info() executor.Info {
	return executor.Info{Processor: f.proc, NumBlocks: f.opts.NumBlocks, BlockSize: f.opts.BlockSize, BlockBytes: 100}
}
func (f *fakeRank) NewSeq(sampling.Params) (executor.SeqID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSeq++
	return f.nextSeq + 100, nil // ids differ from the leader's
}
func (f *fakeRank) FreeSeq(executor.SeqID) {}
func (f *fakeRank) Step(_ context.Context, batch []executor.Work) ([]executor.Result, error) {
	f.mu.Lock()
	f.steps = append(f.steps, batch)
	f.mu.Unlock()
	out := make([]executor.Result, len(batch))
	for i, w := range batch {
		out[i] = executor.Result{Seq: w.Seq, Token: int32(w.Pos)}
	}
	return out, nil
}
func (f *fakeRank) Memory() executor.MemoryInfo { return executor.MemoryInfo{KVBytes: 10} }
func (f *fakeRank) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.ring != nil {
		f.ring.Close()
	}
	return nil
}
func (f *fakeRank) Check(batch []executor.Work) []error {
	errs := make([]error, len(batch))
	for i, w := range batch {
		if w.Pos < 0 {
			errs[i] = fmt.Errorf("negative position")
		}
	}
	return errs
}
func (f *fakeRank) PID() int                { return 4242 }
func (f *fakeRank) Exited() <-chan struct{} { return f.exited }
func (f *fakeRank) ExitErr() error          { return errors.New("killed") }

// fakeDevice plans a fixed pool and opens fake leaders.
type fakeDevice struct{ leader *fakeRank }

func (fakeDevice) Plan(_ *modelfile.Model, size int, o executor.LoadOptions) (executor.LoadOptions, error) {
	o.NumBlocks, o.BlockSize, o.Threads = 64, 16, max(1, o.Threads/size)
	return o, nil
}
func (d *fakeDevice) Open(_ context.Context, _ *modelfile.Model, rank, size int, r compute.Reducer, o executor.LoadOptions) (Shard, error) {
	if rank != 0 || size != 2 || r == nil {
		return nil, fmt.Errorf("leader opened as rank %d of %d, reducer %v", rank, size, r)
	}
	d.leader = &fakeRank{opts: o, proc: "Fake"}
	return d.leader, nil
}

// TestLoadDrivesAnyDevice: the leader plans the options once, opens rank 0
// on its device and sends every worker the same planned options; a step
// runs the works rank 0 accepts on every rank, under each rank's own
// sequence ids; a worker that exits fails the group.
func TestLoadDrivesAnyDevice(t *testing.T) {
	path := fixtures.Path(t, "models", "llama-q-F32.gguf")
	dev := &fakeDevice{}
	worker := &fakeRank{proc: "Fake", exited: make(chan struct{})}
	var load rpc.LoadParams
	start := func(ctx context.Context, rank, size int, dir string, p rpc.LoadParams) (Worker, error) {
		ring, err := JoinRing(ctx, dir, rank, size, time.Minute)
		if err != nil {
			return nil, err
		}
		load, worker.opts, worker.ring = p, p.LoadOptions, ring
		return worker, nil
	}
	ex, err := Load(context.Background(), path, Options{Load: executor.LoadOptions{TP: 2, NumCtx: 128, Threads: 8},
		Device: dev, Start: start, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := executor.LoadOptions{NumCtx: 128, Threads: 4, NumBlocks: 64, BlockSize: 16}
	if load.Path != path || load.LoadOptions != want || dev.leader.opts != want {
		t.Errorf("worker loaded %+v, leader opened with %+v; want %s with %+v on both", load, dev.leader.opts, path, want)
	}
	info := ex.Info()
	if info.Processor != "TP×2 Fake" || info.BlockBytes != 200 || len(info.Ranks) != 2 ||
		info.Ranks[0].Device != "fake" || info.Ranks[1].Device != "fake" || info.Ranks[1].PID != 4242 {
		t.Errorf("info %+v", info)
	}
	seq, err := ex.NewSeq(sampling.Params{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := ex.NewSeq(sampling.Params{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Step(context.Background(), []executor.Work{{Seq: seq, Tokens: []int32{1}, Pos: 3, Sample: true},
		{Seq: other, Tokens: []int32{1}, Pos: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Token != 3 || res[0].Err != nil || res[1].Err == nil || res[1].Err.Kind != executor.KindBadRequest {
		t.Errorf("results %+v: want the first sampled, the second refused", res)
	}
	if len(worker.steps) != 1 || len(worker.steps[0]) != 1 || worker.steps[0][0].Seq != 101 || worker.steps[0][0].Sample {
		t.Errorf("worker ran %+v; want only the valid work, under its own id, without sampling", worker.steps)
	}
	close(worker.exited)
	select {
	case <-ex.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("a worker's exit did not fail the group")
	}
	if _, err := ex.Step(context.Background(), []executor.Work{{Seq: seq, Tokens: []int32{1}, Pos: 4}}); !errors.Is(err, executor.ErrDevice) {
		t.Errorf("step after a rank exited: %v, want a device error", err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if !worker.closed || !dev.leader.closed {
		t.Error("Close left a rank open")
	}
}
