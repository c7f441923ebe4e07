package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/device"
	"github.com/helexa/helexa/pkg/engine/loader"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
	"github.com/helexa/helexa/pkg/models/modelfile"
)

// runnerStarter starts each model's executor in a runner child process:
// `helexa runner` (this binary, on the CPU) or helexa-cuda (on a GPU).
type runnerStarter struct {
	exe     string
	args    []string
	timeout time.Duration
	log     *slog.Logger
}

// serveExecStarter picks where serve runs models: on the device the
// setting names (--device, else HELEXA_DEVICE), in this process or a
// runner process (HELEXA_RUNNER; a GPU always gets a runner process).
func serveExecStarter(ctx context.Context, log *slog.Logger, deviceSetting string) (loader.ExecStarter, error) {
	mode := strings.ToLower(strings.TrimSpace(envvars.Runner.Get()))
	switch mode {
	case "inprocess", "in-process", "process":
	default:
		return nil, fmt.Errorf("%s=%q: want process or inprocess", envvars.Runner.Name, mode)
	}
	exe, err := os.Executable()
	if err != nil && mode == "process" {
		return nil, fmt.Errorf("finding the helexa binary to start runners: %w (or set %s=inprocess)", err, envvars.Runner.Name)
	}
	choice, err := chooseDevice(ctx, log, deviceSetting, exe)
	if err != nil {
		return nil, err
	}
	timeout, err := runnerTimeout()
	if err != nil {
		return nil, err
	}
	if choice.Kind == device.CUDA {
		return cudaStarter(choice, timeout, log), nil
	}
	if mode != "process" {
		return localStarter{log: log}, nil
	}
	return &runnerStarter{exe: exe, args: []string{"runner"}, timeout: timeout, log: log}, nil
}

// localExecStarter is what `helexa run` without a daemon runs models
// with: in this process on the CPU, or in a helexa-cuda runner on a GPU.
func localExecStarter(ctx context.Context, log *slog.Logger, deviceSetting string) (loader.ExecStarter, error) {
	exe, _ := os.Executable() // only to find helexa-cuda beside it
	choice, err := chooseDevice(ctx, log, deviceSetting, exe)
	if err != nil {
		return nil, err
	}
	if choice.Kind != device.CUDA {
		return localStarter{log: log}, nil
	}
	timeout, err := runnerTimeout()
	if err != nil {
		return nil, err
	}
	return cudaStarter(choice, timeout, log), nil
}

// cudaStarter starts models in helexa-cuda runners on the chosen GPU.
func cudaStarter(c device.Choice, timeout time.Duration, log *slog.Logger) *runnerStarter {
	return &runnerStarter{exe: c.Runner, args: []string{"--device", strconv.Itoa(c.GPU.Index)}, timeout: timeout, log: log}
}

// chooseDevice resolves a device setting (empty: HELEXA_DEVICE) and logs
// the choice, and why auto fell back on the CPU.
func chooseDevice(ctx context.Context, log *slog.Logger, setting, exe string) (device.Choice, error) {
	if setting == "" {
		setting = envvars.Device.Get()
	}
	spec, err := device.Parse(setting)
	if err != nil {
		return device.Choice{}, fmt.Errorf("%w (set --device or %s)", err, envvars.Device.Name)
	}
	c, err := device.Resolve(ctx, spec, device.Env{Exe: exe, Runner: envvars.CUDARunner.Get()})
	if err != nil {
		return device.Choice{}, err
	}
	switch {
	case c.Kind == device.CUDA:
		log.Info("models run on a GPU", "device", fmt.Sprintf("cuda:%d", c.GPU.Index), "gpu", c.GPU.Name,
			"free", humanize.Bytes(c.GPU.FreeBytes), "runner", c.Runner)
	case c.Why != "":
		log.Debug("models run on the CPU", "why", c.Why)
	}
	return c, nil
}

// StartExecutor implements loader.ExecStarter: the runner maps the same
// file in its own process.
func (r *runnerStarter) StartExecutor(ctx context.Context, name string, m *modelfile.Model, o executor.LoadOptions) (executor.Executor, error) {
	return rpc.Start(ctx, rpc.ProcessOptions{
		Path: r.exe, Args: r.args, Name: name, Log: r.log, Timeout: r.timeout,
	}, rpc.LoadParams{Path: m.Path, LoadOptions: o})
}
