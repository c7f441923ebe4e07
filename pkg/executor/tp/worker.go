package tp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/models/modelfile"
)

// ProcessStarter starts worker ranks as child processes of the command in
// proc (the helexa binary and "worker"), adding --rank, --size and
// --rendezvous to its arguments. The children die with this process.
func ProcessStarter(proc rpc.ProcessOptions) StartWorker {
	return func(ctx context.Context, rank, size int, dir string, load rpc.LoadParams) (Worker, error) {
		p := proc
		p.Args = append(append([]string(nil), proc.Args...),
			"--rank", strconv.Itoa(rank), "--size", strconv.Itoa(size), "--rendezvous", dir)
		p.Name = fmt.Sprintf("%s rank %d/%d", proc.Name, rank, size)
		r, err := rpc.Start(ctx, p, load)
		if err != nil {
			return nil, err // not a nil *rpc.Remote in a non-nil Worker
		}
		return r, nil
	}
}

// WorkerOpener is the rpc.Opener of a worker rank (`helexa worker`): it
// joins the group's ring through the sockets in dir, then opens its shard
// of the model the load request names on dev, with the options the
// leader planned.
func WorkerOpener(dev Device, rank, size int, dir string, timeout time.Duration) rpc.Opener {
	return func(ctx context.Context, p rpc.LoadParams) (executor.Executor, error) {
		if size < 2 || rank < 1 || rank >= size {
			return nil, executor.Errorf(executor.KindBadRequest, "worker rank %d of %d: want 1 ≤ rank < size", rank, size)
		}
		ring, err := JoinRing(ctx, dir, rank, size, timeout)
		if err != nil {
			return nil, executor.Errorf(executor.KindDevice, "rank %d joining the ring: %v", rank, err)
		}
		m, err := modelfile.Open(p.Path)
		if err != nil {
			ring.Close()
			return nil, executor.Errorf(executor.KindBadRequest, "rank %d opening %s: %v", rank, p.Path, err)
		}
		sh, err := dev.Open(ctx, m, rank, size, ring, p.LoadOptions)
		if err != nil {
			ring.Close()
			_ = m.Close()
			return nil, executor.Errorf(executor.KindBadRequest, "rank %d loading %s: %v", rank, p.Path, err)
		}
		return &workerExec{Shard: sh, ring: ring, file: m}, nil
	}
}

// workerExec is a worker's shard; closing it leaves the ring and closes
// the model file after the shard.
type workerExec struct {
	Shard
	ring *Ring
	file *modelfile.Model
}

func (w *workerExec) Close() error {
	w.ring.Close()
	return errors.Join(w.Shard.Close(), w.file.Close())
}
