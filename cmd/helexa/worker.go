package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/executor/tp"
	"github.com/helexa/helexa/pkg/models/modelfile"
)

// workerOptions are the flags of the hidden `helexa worker` command.
type workerOptions struct {
	Rank, Size int
	Rendezvous string
}

// newWorkerCmd is a tensor-parallel rank 1..N-1 process, started by the
// process holding rank 0 (helexa tp, a runner, serve in-process). It
// serves its shard over the runner RPC on stdin/stdout and sums partial
// results with the other ranks through the sockets in --rendezvous.
func newWorkerCmd(s streams) *cobra.Command {
	var opts workerOptions
	cmd := &cobra.Command{
		Use:    "worker --rank R --size N --rendezvous DIR",
		Short:  "Serve one tensor-parallel rank over the runner RPC (started by helexa tp and serve)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), opts, s)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Rank, "rank", 0, "this process's rank (1 to size-1)")
	f.IntVar(&opts.Size, "size", 0, "ranks in the group")
	f.StringVar(&opts.Rendezvous, "rendezvous", "", "directory of the ranks' sockets")
	return cmd
}

func runWorker(ctx context.Context, opts workerOptions, s streams) error {
	if opts.Rendezvous == "" {
		return fmt.Errorf("worker: --rendezvous is required")
	}
	timeout, err := runnerTimeout()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(s.Err, &slog.HandlerOptions{Level: logLevel(slog.LevelInfo)}))
	open := tp.WorkerOpener(local.Shards{}, opts.Rank, opts.Size, opts.Rendezvous, timeout)
	if err := rpc.Serve(context.WithoutCancel(ctx), s.In, s.Out, open, log); err != nil {
		return fmt.Errorf("worker rank %d: %w", opts.Rank, err)
	}
	return nil
}

// runnerTimeout is HELEXA_RUNNER_TIMEOUT: how long a rank or runner may
// stay silent.
func runnerTimeout() (time.Duration, error) {
	timeout, err := time.ParseDuration(strings.TrimSpace(envvars.RunnerTimeout.Get()))
	if err != nil || timeout <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 5m", envvars.RunnerTimeout.Name, envvars.RunnerTimeout.Get())
	}
	return timeout, nil
}

// loadTP loads a model split over o.TP ranks on the CPU: rank 0 in this
// process, the others in `helexa worker` children of this binary, each
// with its share of o.Threads.
func loadTP(ctx context.Context, path string, o executor.LoadOptions, name string, log *slog.Logger) (*tp.Executor, error) {
	timeout, err := runnerTimeout()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the helexa binary to start worker ranks: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return tp.Load(ctx, path, tp.Options{Load: o, Device: local.Shards{}, Timeout: timeout,
		Start: tp.ProcessStarter(rpc.ProcessOptions{Path: exe, Args: []string{"worker"}, Name: name, Log: log, Timeout: timeout})})
}

// localStarter runs models in this process: on the CPU, or split over
// worker ranks when a load asks for tensor parallelism.
type localStarter struct{ log *slog.Logger }

// StartExecutor implements loader.ExecStarter.
func (l localStarter) StartExecutor(ctx context.Context, name string, m *modelfile.Model, o executor.LoadOptions) (executor.Executor, error) {
	if o.TP > 1 {
		return loadTP(ctx, m.Path, o, name, l.log)
	}
	return local.New(m, local.Options{LoadOptions: o})
}
