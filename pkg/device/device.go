// Package device chooses where helexa runs a model: it parses a device
// setting (HELEXA_DEVICE, --device), finds the helexa-cuda runner binary,
// and asks it which GPUs the driver sees. The main binary never links
// CUDA: it learns about GPUs only through the runner's --probe.
package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Kind is a kind of processor.
type Kind string

// Kinds.
const (
	CPU  Kind = "cpu"
	CUDA Kind = "cuda"
)

// Spec is a parsed device setting.
type Spec struct {
	// Auto picks a GPU when one is usable, else the CPU.
	Auto  bool
	Kind  Kind
	Index int // the GPU's ordinal (CUDA)
}

func (s Spec) String() string {
	switch {
	case s.Auto:
		return "auto"
	case s.Kind == CUDA:
		return fmt.Sprintf("cuda:%d", s.Index)
	}
	return string(s.Kind)
}

// Parse reads a device setting: auto (or empty), cpu, cuda, cuda:N.
func Parse(s string) (Spec, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "auto":
		return Spec{Auto: true}, nil
	case "cpu":
		return Spec{Kind: CPU}, nil
	case "cuda", "gpu":
		return Spec{Kind: CUDA}, nil
	}
	if rest, ok := strings.CutPrefix(v, "cuda:"); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 0 {
			return Spec{Kind: CUDA, Index: n}, nil
		}
	}
	return Spec{}, fmt.Errorf("device %q: want auto, cpu, cuda or cuda:N", s)
}

// GPU is one GPU as helexa-cuda --probe describes it.
type GPU struct {
	Index      int    `json:"index"`
	Name       string `json:"name"`
	Major      int    `json:"major"`
	Minor      int    `json:"minor"`
	TotalBytes int64  `json:"total_bytes"`
	FreeBytes  int64  `json:"free_bytes"`
}

// RunnerName is the CUDA runner's file name.
const RunnerName = "helexa-cuda"

// FindRunner locates helexa-cuda: explicit (a path, from
// HELEXA_CUDA_RUNNER) when set, else next to the helexa binary exe, else
// on PATH.
func FindRunner(explicit, exe string) (string, error) {
	if explicit != "" {
		if err := executable(explicit); err != nil {
			return "", fmt.Errorf("CUDA runner %s: %w", explicit, err)
		}
		return explicit, nil
	}
	if exe != "" {
		p := filepath.Join(filepath.Dir(exe), RunnerName)
		if executable(p) == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(RunnerName)
	if err != nil {
		return "", fmt.Errorf("%s is not next to helexa nor on PATH (build it with `make cuda`)", RunnerName)
	}
	return p, nil
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// DriverGPUs counts the GPUs the NVIDIA kernel driver lists under root
// (normally /proc/driver/nvidia/gpus); 0 without the driver.
func DriverGPUs(root string) int {
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	return len(ents)
}

// probeTimeout bounds one helexa-cuda --probe (creating a context on
// every GPU takes a few seconds at most).
const probeTimeout = 60 * time.Second

// Probe runs `runner --probe` and returns the GPUs it lists.
func Probe(ctx context.Context, runner string) ([]GPU, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, runner, "--probe")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String() + " " + out.String())
		return nil, fmt.Errorf("%s --probe: %w: %s", runner, err, msg)
	}
	return parseProbe(out.Bytes())
}

func parseProbe(b []byte) ([]GPU, error) {
	var gpus []GPU
	if err := json.Unmarshal(b, &gpus); err != nil {
		return nil, fmt.Errorf("reading the CUDA runner's probe: %w", err)
	}
	return gpus, nil
}

// Choice is where models run.
type Choice struct {
	Kind   Kind
	GPU    GPU    // the chosen GPU (CUDA)
	Runner string // helexa-cuda's path (CUDA)
	// Why says why auto chose the CPU (empty otherwise).
	Why string
}

// Env is what Resolve consults, so that tests can fake it.
type Env struct {
	Exe        string // the helexa binary
	Runner     string // HELEXA_CUDA_RUNNER
	DriverRoot string // /proc/driver/nvidia/gpus
	Probe      func(ctx context.Context, runner string) ([]GPU, error)
}

// Resolve turns a setting into a choice. An explicit cuda setting that
// cannot be met is an error that says what is missing; auto falls back on
// the CPU and says why. Without a runner named in env.Runner, a GPU needs
// the NVIDIA driver's listing under env.DriverRoot before the runner found
// beside helexa or on PATH is asked.
func Resolve(ctx context.Context, s Spec, env Env) (Choice, error) {
	if !s.Auto && s.Kind == CPU {
		return Choice{Kind: CPU}, nil
	}
	c, err := resolveCUDA(ctx, s.Index, env)
	if err == nil {
		return c, nil
	}
	if s.Auto {
		return Choice{Kind: CPU, Why: err.Error()}, nil
	}
	return Choice{}, fmt.Errorf("device %s: %w (or run on the CPU: --device cpu)", s, err)
}

func resolveCUDA(ctx context.Context, index int, env Env) (Choice, error) {
	if env.DriverRoot == "" {
		env.DriverRoot = "/proc/driver/nvidia/gpus"
	}
	if env.Probe == nil {
		env.Probe = Probe
	}
	// A runner named explicitly is trusted to know: its probe decides.
	if env.Runner == "" && DriverGPUs(env.DriverRoot) == 0 {
		return Choice{}, errors.New("no NVIDIA GPU driver (nothing in " + env.DriverRoot + ")")
	}
	runner, err := FindRunner(env.Runner, env.Exe)
	if err != nil {
		return Choice{}, err
	}
	gpus, err := env.Probe(ctx, runner)
	if err != nil {
		return Choice{}, err
	}
	for _, g := range gpus {
		if g.Index == index {
			return Choice{Kind: CUDA, GPU: g, Runner: runner}, nil
		}
	}
	return Choice{}, fmt.Errorf("no CUDA device %d (the runner sees %d)", index, len(gpus))
}
