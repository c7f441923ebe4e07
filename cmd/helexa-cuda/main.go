//go:build cuda

// Command helexa-cuda is helexa's GPU runner: the only binary that links
// CUDA (gorgonia.org/cu). helexa starts it for every model it runs on a
// GPU and drives it over the runner RPC on stdin/stdout (JSON logs on
// stderr), exactly as it drives `helexa runner` on the CPU; a CUDA error
// that ruins the device context ends with this process, never the
// daemon's. `helexa-cuda --probe` prints the GPUs the driver sees as JSON
// (helexa's device choice reads it).
//
// The CUDA driver library initialises when the process starts and exits
// with an error on a machine without a GPU, so the probe failing is how
// helexa learns there is none.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/prof"
	"github.com/helexa/helexa/pkg/compute/cuda"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/rpc"
)

// options are helexa-cuda's flags.
type options struct {
	Probe  bool // print the GPUs and exit
	Device int  // the GPU's ordinal
}

// streams are the runner's I/O (stdin/stdout carry the RPC).
type streams struct {
	In       io.Reader
	Out, Err io.Writer
}

func main() {
	cmd := newCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "helexa-cuda:", err)
		os.Exit(1)
	}
}

func newCmd(s streams) *cobra.Command {
	var opts options
	cmd := &cobra.Command{
		Use:           "helexa-cuda",
		Short:         "Serve one model on a GPU over the runner RPC on stdin/stdout (started by helexa)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), opts, s)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Probe, "probe", false, "print the GPUs the driver sees as JSON and exit")
	f.IntVar(&opts.Device, "device", 0, "ordinal of the GPU to run on")
	return cmd
}

func run(ctx context.Context, opts options, s streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Probe {
		gpus, err := cuda.Probe()
		if err != nil {
			return err
		}
		if gpus == nil {
			gpus = []cuda.Info{}
		}
		return json.NewEncoder(s.Out).Encode(gpus)
	}
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(envvars.LogLevel.Get()))
	log := slog.New(slog.NewJSONHandler(s.Err, &slog.HandlerOptions{Level: level}))
	stop, err := prof.Start(envvars.RunnerProfile.Get())
	if err != nil {
		return err
	}
	if err := rpc.Serve(context.WithoutCancel(ctx), s.In, s.Out, opener(opts.Device, log), log); err != nil {
		_ = stop()
		return fmt.Errorf("runner: %w", err)
	}
	return stop()
}

// opener loads a model on GPU ordinal with the same executor the CPU
// runner uses, on the CUDA backend.
func opener(ordinal int, log *slog.Logger) rpc.Opener {
	return func(ctx context.Context, p rpc.LoadParams) (executor.Executor, error) {
		if p.TP > 1 {
			return nil, executor.Errorf(executor.KindUnsupported, "tensor parallelism over GPUs is not supported yet (tp %d)", p.TP)
		}
		o := cuda.Options{PTX: envvars.CUDAPTX.Get() == "1", NoGraphs: envvars.CUDAGraphs.Get() == "0", NoPDL: envvars.CUDAPDL.Get() == "0"}
		if prefix := envvars.CUDATimes.Get(); prefix != "" {
			o.KernelTimes = prof.Path(prefix)
		}
		be, err := cuda.Open(ordinal, o)
		if err != nil {
			return nil, executor.Errorf(executor.KindDevice, "opening GPU %d: %v", ordinal, err)
		}
		free := be.FreeMemory()
		log.Info("GPU open", "device", be.Name(), "free", free, "cublas", be.HasCublas())
		ex, err := local.Load(ctx, p.Path, local.Options{LoadOptions: p.LoadOptions, Device: be}) // the backend's CheckFits is the pre-flight
		if err != nil {
			be.Close()
			kind := executor.KindBadRequest
			if errors.Is(err, cuda.ErrNoRoom) {
				kind = executor.KindNoMemory
			}
			return nil, executor.Errorf(kind, "loading %s on %s: %v", p.Path, be.Name(), err)
		}
		return ex, nil
	}
}
