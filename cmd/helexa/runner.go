package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/prof"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/executor/tp"
)

// runnerOptions are the flags of the hidden `helexa runner` command (none
// yet: everything a runner needs arrives in its load request).
type runnerOptions struct{}

// newRunnerCmd is the runner process `helexa serve` starts for each loaded
// model: it serves one model over the runner RPC on stdin/stdout and logs
// to stderr. It is not meant to be run by hand.
func newRunnerCmd(s streams) *cobra.Command {
	var opts runnerOptions
	return &cobra.Command{
		Use:    "runner",
		Short:  "Serve one model over the runner RPC on stdin/stdout (started by helexa serve)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRunner(cmd.Context(), opts, s)
		},
	}
}

// runRunner serves until the daemon closes the pipe or sends close; it logs
// JSON records, which the daemon re-logs with the model's name. The daemon
// owns the runner's lifetime: Ctrl+C in the daemon's terminal does
// not end it (the daemon closes its runners on the way out).
func runRunner(ctx context.Context, _ runnerOptions, s streams) error {
	log := slog.New(slog.NewJSONHandler(s.Err, &slog.HandlerOptions{Level: logLevel(slog.LevelInfo)}))
	stop, err := prof.Start(envvars.RunnerProfile.Get())
	if err != nil {
		return err
	}
	if err := rpc.Serve(context.WithoutCancel(ctx), s.In, s.Out, cpuRunnerOpener(log), log); err != nil {
		_ = stop()
		return fmt.Errorf("runner: %w", err)
	}
	return stop()
}

// cpuRunnerOpener loads a model on the CPU for a runner: in the runner, or
// split over worker ranks with the runner as rank 0.
func cpuRunnerOpener(log *slog.Logger) rpc.Opener {
	return func(ctx context.Context, p rpc.LoadParams) (executor.Executor, error) {
		if p.TP <= 1 {
			ex, err := local.Load(ctx, p.Path, local.Options{LoadOptions: p.LoadOptions})
			if err != nil {
				return nil, executor.Errorf(executor.KindBadRequest, "loading %s: %v", p.Path, err)
			}
			return ex, nil
		}
		ex, err := loadTP(ctx, p.Path, p.LoadOptions, filepath.Base(p.Path), log)
		if err != nil {
			return nil, executor.Errorf(executor.KindBadRequest, "loading %s over %d ranks: %v", p.Path, p.TP, err)
		}
		go exitWhenRankFails(ex, log)
		return ex, nil
	}
}

// exitWhenRankFails ends the runner when a rank of its model fails, so
// that the daemon sees the model poisoned at once rather than at its next
// step (the failing step's reply goes out first).
func exitWhenRankFails(ex *tp.Executor, log *slog.Logger) {
	<-ex.Exited()
	log.Error("a tensor-parallel rank failed; the runner exits", "err", ex.ExitErr())
	time.Sleep(200 * time.Millisecond)
	os.Exit(3)
}
