package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/runner/loader"
)

// runnerStarter starts each model's executor in a `helexa runner` child
// process of this binary.
type runnerStarter struct {
	exe     string
	timeout time.Duration
	log     *slog.Logger
}

// serveExecStarter picks where serve runs models (HELEXA_RUNNER): in this
// process (localStarter), or a runnerStarter.
func serveExecStarter(log *slog.Logger) (loader.ExecStarter, error) {
	mode := strings.ToLower(strings.TrimSpace(envvars.Runner.Get()))
	switch mode {
	case "inprocess", "in-process":
		return localStarter{log: log}, nil
	case "process":
	default:
		return nil, fmt.Errorf("%s=%q: want process or inprocess", envvars.Runner.Name, mode)
	}
	timeout, err := runnerTimeout()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the helexa binary to start runners: %w (or set %s=inprocess)", err, envvars.Runner.Name)
	}
	return &runnerStarter{exe: exe, timeout: timeout, log: log}, nil
}

// StartExecutor implements loader.ExecStarter: the runner maps the same
// file in its own process.
func (r *runnerStarter) StartExecutor(ctx context.Context, name string, m *modelfile.Model, o loader.ExecOptions) (executor.Executor, error) {
	return rpc.Start(ctx, rpc.ProcessOptions{
		Path: r.exe, Args: []string{"runner"}, Name: name, Log: r.log, Timeout: r.timeout,
	}, rpc.LoadParams{Path: m.Path, NumCtx: o.NumCtx, BlockSize: o.BlockSize, Threads: o.Threads,
		ChunkSize: o.ChunkSize, Parallel: o.NumParallel, TP: o.TP, KVType: o.KVType})
}

// Short names for the loader's types in this package's starters.
type (
	modelfileModel = modelfile.Model
	execOptions    = loader.ExecOptions
)
