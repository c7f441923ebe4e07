package tp

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
)

// ProcessStarter starts worker ranks as child processes of the command in
// proc (the helexa binary and "worker"), adding --rank, --size and
// --rendezvous to its arguments. The children die with this process.
func ProcessStarter(proc rpc.ProcessOptions) StartWorker {
	return func(ctx context.Context, rank, size int, dir string, load WorkerLoad) (Worker, error) {
		p := proc
		p.Args = append(append([]string(nil), proc.Args...),
			"--rank", strconv.Itoa(rank), "--size", strconv.Itoa(size), "--rendezvous", dir)
		p.Name = fmt.Sprintf("%s rank %d/%d", proc.Name, rank, size)
		r, err := rpc.Start(ctx, p, rpc.LoadParams{Path: load.Path, NumCtx: load.NumCtx, BlockSize: load.BlockSize,
			NumBlocks: load.NumBlocks, WinBlocks: load.WinBlocks, Threads: load.Threads, ChunkSize: load.Chunk, KVType: load.KVType})
		if err != nil {
			return nil, err // not a nil *rpc.Remote in a non-nil Worker
		}
		return r, nil
	}
}

// WorkerOpener is the rpc.Opener of a worker rank (`helexa worker`): it
// joins the group's ring through the sockets in dir, then loads its shard
// of the model the load request names.
func WorkerOpener(rank, size int, dir string, timeout time.Duration) rpc.Opener {
	return func(ctx context.Context, p rpc.LoadParams) (executor.Executor, error) {
		if size < 2 || rank < 1 || rank >= size {
			return nil, executor.Errorf(executor.KindBadRequest, "worker rank %d of %d: want 1 ≤ rank < size", rank, size)
		}
		ring, err := JoinRing(ctx, dir, rank, size, timeout)
		if err != nil {
			return nil, executor.Errorf(executor.KindDevice, "rank %d joining the ring: %v", rank, err)
		}
		ex, err := local.Load(ctx, p.Path, local.Options{
			NumCtx: p.NumCtx, BlockSize: p.BlockSize, NumBlocks: p.NumBlocks, WinBlocks: p.WinBlocks, Threads: p.Threads,
			ChunkSize: p.ChunkSize, KVType: p.KVType, Rank: rank, Size: size, Reducer: ring,
		})
		if err != nil {
			ring.Close()
			return nil, executor.Errorf(executor.KindBadRequest, "rank %d loading %s: %v", rank, p.Path, err)
		}
		return &workerExec{Executor: ex, ring: ring}, nil
	}
}

// workerExec is a worker's shard executor; closing it leaves the ring.
type workerExec struct {
	*local.Executor
	ring *Ring
}

func (w *workerExec) Close() error {
	w.ring.Close()
	return w.Executor.Close()
}
