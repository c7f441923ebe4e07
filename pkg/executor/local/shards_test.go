package local_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/tp"
	"github.com/helexa/helexa/pkg/models/modelfile"
)

// TestShardsPlan: a CPU group's plan shares the threads out among the
// ranks, fixes the KV pool every rank allocates, and is one rank's
// options (no TP).
func TestShardsPlan(t *testing.T) {
	m, err := modelfile.Open(fixtures.Path(t, "models", "llama-q-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tests := []struct {
		threads, size, want int
	}{
		{threads: 8, size: 2, want: 4},
		{threads: 3, size: 2, want: 1},
		{threads: 1, size: 4, want: 1},
		{threads: 0, size: 2, want: max(1, runtime.NumCPU()/2)},
	}
	for _, tt := range tests {
		o, err := local.Shards{}.Plan(m, tt.size, executor.LoadOptions{NumCtx: 64, Threads: tt.threads, TP: tt.size})
		if err != nil {
			t.Fatal(err)
		}
		if o.Threads != tt.want || o.TP != 0 || o.NumBlocks == 0 || o.BlockSize == 0 || o.KVType == "" || o.NumCtx != 64 {
			t.Errorf("Plan(threads %d, size %d) = %+v; want %d threads a rank and the pool fixed", tt.threads, tt.size, o, tt.want)
		}
	}
}

// TestShardsOpen: a shard is a local executor holding its rank's share,
// on the planned pool.
func TestShardsOpen(t *testing.T) {
	m, err := modelfile.Open(fixtures.Path(t, "models", "llama-q-F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	o, err := local.Shards{}.Plan(m, 2, executor.LoadOptions{NumCtx: 64, NumBlocks: 8, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tp.JoinRing(context.Background(), t.TempDir(), 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := local.Shards{}.Open(context.Background(), m, 1, 2, ring, o)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if info := sh.Info(); info.NumBlocks != 8 || info.Processor != "CPU" {
		t.Errorf("shard info %+v: want 8 blocks on the CPU", info)
	}
	if _, err := (local.Shards{}).Open(context.Background(), m, 0, 2, nil, o); err == nil {
		t.Error("a shard without a reducer opened")
	}
	if _, err := local.New(m, local.Options{LoadOptions: executor.LoadOptions{TP: 2}}); err == nil {
		t.Error("a local executor took a load over 2 ranks")
	}
}
