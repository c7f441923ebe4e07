package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
)

// TestGPUPoisonAndRecover serves a model on the GPU (make test-gpu sets
// HELEXA_CUDA_RUNNER; skipped without one), makes a real CUDA failure in
// its runner through the HELEXA_CUDA_FAULT hook, and checks that the
// request fails, the model shows poisoned with the reason, and the next
// request gets a new runner and the same greedy text as before.
func TestGPUPoisonAndRecover(t *testing.T) {
	if testGPURunner == "" {
		t.Skipf("no GPU runner: set %s to a helexa-cuda binary on a machine with an NVIDIA GPU (make test-gpu)", envvars.CUDARunner.Name)
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	fault := filepath.Join(t.TempDir(), "fault")
	addr, _, logs := startDaemon(t, "", envvars.Device.Name+"=cuda", envvars.CUDARunner.Name+"="+testGPURunner,
		envvars.CUDAFault.Name+"="+fault)
	defer logOnFailure(t, logs)
	want := greedyText(t, addr, model)
	ps := psModels(t, addr)
	if len(ps) != 1 || !strings.HasPrefix(ps[0].Processor, "CUDA:") || ps[0].State != engine.StateReady {
		t.Fatalf("ps %+v, want one ready model on a CUDA device", ps)
	}
	pid := ps[0].RunnerPID
	if err := os.WriteFile(fault, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	resp := postJSON(t, addr, "/v1/completions", `{"model":"`+model+`","prompt":"Once upon a time","max_tokens":8,"temperature":0}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 && !strings.Contains(string(body), `"error"`) {
		t.Fatalf("the request through a faulted GPU succeeded: %s", body)
	}
	if _, err := os.Stat(fault); !os.IsNotExist(err) {
		t.Fatalf("the runner did not take the fault hook (%v)", err)
	}
	ps = psModels(t, addr)
	if len(ps) != 1 || ps[0].State != engine.StatePoisoned || ps[0].Error == "" {
		t.Fatalf("ps after the fault: %+v, want poisoned with the reason", ps)
	}
	if got := greedyText(t, addr, model); got != want {
		t.Fatalf("greedy text after recovery %q, want %q", got, want)
	}
	if ps := psModels(t, addr); ps[0].State != engine.StateReady || ps[0].RunnerPID == pid {
		t.Fatalf("ps after recovery %+v, want ready in a new runner", ps[0])
	}
}

// TestServeStartsTheCUDARunner: with HELEXA_DEVICE=cuda and
// HELEXA_CUDA_RUNNER naming a runner, serve probes it and starts it (with
// --device) for each model, driving it over the runner RPC. The runner
// here is a script that answers the probe with one GPU and otherwise
// records its arguments and runs `helexa runner` (the CPU underneath: the
// wiring is what is tested, on any machine).
func TestServeStartsTheCUDARunner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := t.TempDir()
	bin := envvars.TestBin.Get()
	if bin == "" {
		bin = filepath.Join(dir, "helexa")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("building helexa: %v\n%s", err, out)
		}
		t.Setenv(envvars.TestBin.Name, bin)
	}
	argsLog := filepath.Join(dir, "runner-args")
	runner := filepath.Join(dir, "fake-cuda")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = --probe ]; then
	echo '[{"index":0,"name":"Fake GPU","major":9,"minor":0,"total_bytes":1000000000,"free_bytes":900000000}]'
	exit 0
fi
echo "$@" >> %q
exec %q runner
`, argsLog, bin)
	if err := os.WriteFile(runner, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, _, logs := startDaemon(t, "", envvars.Device.Name+"=cuda", envvars.CUDARunner.Name+"="+runner)
	defer logOnFailure(t, logs)
	if got := greedyText(t, addr, model); got == "" {
		t.Fatal("no text through the runner")
	}
	args, err := os.ReadFile(argsLog)
	if err != nil || strings.TrimSpace(string(args)) != "--device 0" {
		t.Fatalf("the runner was started with %q (%v), want --device 0", args, err)
	}
	if !strings.Contains(logs.String(), "Fake GPU") {
		t.Errorf("the daemon did not log the GPU it chose:\n%s", logs.String())
	}
}
