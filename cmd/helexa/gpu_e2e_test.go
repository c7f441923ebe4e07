package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/runner"
)

// TestGPUPoisonAndRecover serves a model on the GPU (make test-gpu sets
// HELEXA_CUDA_RUNNER; skipped without one), makes a real CUDA failure in
// its runner through the HELEXA_CUDA_FAULT hook, and checks that the
// request fails, the model shows poisoned with the reason, and the next
// request gets a new runner and the same greedy text as before.
func TestGPUPoisonAndRecover(t *testing.T) {
	if envvars.CUDARunner.Get() == "" {
		t.Skipf("no GPU runner: set %s to a helexa-cuda binary on a machine with an NVIDIA GPU (make test-gpu)", envvars.CUDARunner.Name)
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	fault := filepath.Join(t.TempDir(), "fault")
	addr, _, logs := startDaemon(t, "", envvars.Device.Name+"=cuda", envvars.CUDAFault.Name+"="+fault)
	defer logOnFailure(t, logs)
	want := greedyText(t, addr, model)
	ps := psModels(t, addr)
	if len(ps) != 1 || !strings.HasPrefix(ps[0].Processor, "CUDA:") || ps[0].State != runner.StateReady {
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
	if len(ps) != 1 || ps[0].State != runner.StatePoisoned || ps[0].Error == "" {
		t.Fatalf("ps after the fault: %+v, want poisoned with the reason", ps)
	}
	if got := greedyText(t, addr, model); got != want {
		t.Fatalf("greedy text after recovery %q, want %q", got, want)
	}
	if ps := psModels(t, addr); ps[0].State != runner.StateReady || ps[0].RunnerPID == pid {
		t.Fatalf("ps after recovery %+v, want ready in a new runner", ps[0])
	}
}
