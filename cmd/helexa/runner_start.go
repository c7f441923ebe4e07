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
	"github.com/helexa/helexa/pkg/runner"
)

// runnerStarter starts each model's executor in a `helexa runner` child
// process of this binary.
type runnerStarter struct {
	exe     string
	timeout time.Duration
	log     *slog.Logger
}

// serveExecStarter picks where serve runs models (HELEXA_RUNNER): nil for
// in-process, or a runnerStarter.
func serveExecStarter(log *slog.Logger) (runner.ExecStarter, error) {
	mode := strings.ToLower(strings.TrimSpace(envvars.Runner.Get()))
	switch mode {
	case "inprocess", "in-process":
		return nil, nil
	case "process":
	default:
		return nil, fmt.Errorf("%s=%q: want process or inprocess", envvars.Runner.Name, mode)
	}
	timeout, err := time.ParseDuration(strings.TrimSpace(envvars.RunnerTimeout.Get()))
	if err != nil || timeout <= 0 {
		return nil, fmt.Errorf("%s=%q: want a positive duration such as 5m", envvars.RunnerTimeout.Name, envvars.RunnerTimeout.Get())
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the helexa binary to start runners: %w (or set %s=inprocess)", err, envvars.Runner.Name)
	}
	return &runnerStarter{exe: exe, timeout: timeout, log: log}, nil
}

// StartExecutor implements runner.ExecStarter.
func (r *runnerStarter) StartExecutor(ctx context.Context, name, path string, o runner.ExecOptions) (executor.Executor, error) {
	return rpc.Start(ctx, rpc.ProcessOptions{
		Path: r.exe, Args: []string{"runner"}, Name: name, Log: r.log, Timeout: r.timeout,
	}, rpc.LoadParams{Path: path, NumCtx: o.NumCtx, BlockSize: o.BlockSize, Threads: o.Threads, ChunkSize: o.ChunkSize})
}
