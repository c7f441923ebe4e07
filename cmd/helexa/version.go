package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/device"
)

// version and commit are set at build time (make build: -X main.version=…
// -X main.commit=…); a plain go build reports the module version or "dev"
// and the commit Go stamped, if any.
var version, commit = "", ""

// versionOptions are the flags of `helexa version` (none).
type versionOptions struct{}

func newVersionCmd(s streams) *cobra.Command {
	var opts versionOptions
	return &cobra.Command{
		Use:   "version",
		Short: "Print helexa's version, commit, Go version, CPU kernels and GPU runner",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(cmd.Context(), opts, s)
		},
	}
}

func runVersion(_ context.Context, _ versionOptions, s streams) error {
	_, err := fmt.Fprint(s.Out, versionText())
	return err
}

// versionText is what `helexa version` and `helexa --version` print.
func versionText() string {
	v, rev, modified := buildVersion()
	if modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("helexa %s\ncommit:      %s\ngo:          %s %s/%s\ncpu kernels: %s\ngpu runner:  %s\n",
		v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH, quant.KernelPath(), gpuRunner())
}

// buildVersion reads the version and VCS commit the binary was built from.
func buildVersion() (v, rev string, modified bool) {
	v, rev = version, orDefault(commit, "unknown")
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDefault(v, "dev"), rev, false
	}
	if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	for _, st := range info.Settings {
		switch st.Key {
		case "vcs.revision":
			if commit == "" {
				rev = st.Value
			}
		case "vcs.modified":
			modified = st.Value == "true"
		}
	}
	return orDefault(v, "dev"), rev, modified
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// gpuRunner says whether a GPU and the helexa-cuda runner are present
// (what HELEXA_DEVICE=auto looks for; it also asks the runner).
func gpuRunner() string {
	exe, _ := os.Executable()
	path, err := device.FindRunner(envvars.CUDARunner.Get(), exe)
	if err != nil {
		path = ""
	}
	gpus := device.DriverGPUs("/proc/driver/nvidia/gpus")
	switch {
	case path == "" && gpus == 0:
		return "none (no NVIDIA GPU; helexa-cuda not installed): models run on the CPU"
	case path == "":
		return fmt.Sprintf("not installed (%d NVIDIA GPU(s) found; build it with `make cuda`): models run on the CPU", gpus)
	case gpus == 0:
		return path + " (no NVIDIA GPU found): models run on the CPU"
	}
	return fmt.Sprintf("%s (%d NVIDIA GPU(s)): models run on GPU 0 unless --device or %s says otherwise", path, gpus, envvars.Device.Name)
}
