package local

import (
	"context"
	"runtime"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/tp"
	"github.com/helexa/helexa/pkg/models/modelfile"
)

// Shards is the tp.Device of CPU ranks: it opens each rank's shard of a
// model as a local executor on the CPU.
type Shards struct {
	// Routing, when set, observes the MoE expert choices of the shards it
	// opens (every rank routes alike).
	Routing RoutingHook
}

var _ tp.Device = Shards{}

// Plan implements tp.Device: the KV pool is sized for one rank's shard of
// m, and each rank gets its share of o.Threads (all cores when 0), at
// least one.
func (Shards) Plan(m *modelfile.Model, size int, o executor.LoadOptions) (executor.LoadOptions, error) {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	o.Threads = max(1, o.Threads/size)
	o.TP = 0
	hp := m.Arch.ShardHP(size)
	opts := Options{LoadOptions: o}
	if err := fillDefaults(&opts, &hp); err != nil {
		return o, err
	}
	return opts.LoadOptions, nil
}

// Open implements tp.Device.
func (s Shards) Open(ctx context.Context, m *modelfile.Model, rank, size int, r compute.Reducer, o executor.LoadOptions) (tp.Shard, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ex, err := New(m, Options{LoadOptions: o, Routing: s.Routing, Rank: rank, Size: size, Reducer: r})
	if err != nil {
		return nil, err
	}
	return ex, nil
}
