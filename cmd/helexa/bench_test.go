package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

// TestBenchInProcess runs `helexa bench` on the smallest fixture model: one
// row per concurrency level with positive decode throughput, and no
// per-request log lines burying the table.
func TestBenchInProcess(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	t.Setenv("HF_HUB_CACHE", filepath.Join(t.TempDir(), "hf"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HELEXA_LOG_LEVEL", "")
	tests := []struct {
		name string
		json bool
	}{
		{"table", false},
		{"json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := newRootCmd(streams{Out: &out, Err: &errOut})
			args := []string{"bench", model, "--concurrency", "1,3", "-n", "8"}
			if tt.json {
				args = append(args, "--json")
			}
			root.SetArgs(args)
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(errOut.String(), "request finished") {
				t.Errorf("per-request log lines on stderr:\n%s", errOut.String())
			}
			if !tt.json {
				for _, want := range []string{"DECODE tok/s", "\n             1 ", "\n             3 "} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("table lacks %q:\n%s", want, out.String())
					}
				}
				return
			}
			var levels []benchLevel
			if err := json.Unmarshal(out.Bytes(), &levels); err != nil || len(levels) != 2 {
				t.Fatalf("%v: %s", err, out.String())
			}
			for i, lv := range levels {
				if lv.Concurrency != []int{1, 3}[i] || lv.GeneratedTokens <= 0 || lv.DecodeTPS <= 0 {
					t.Errorf("level %+v", lv)
				}
			}
		})
	}
}

// TestBenchLlamaMode: -p runs the llama-bench tests (pp of exactly -p
// tokens, tg of -n tokens past any EOS) over -r repetitions and the
// streams curve, each stream generating exactly -n tokens.
func TestBenchLlamaMode(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	t.Setenv("HF_HUB_CACHE", filepath.Join(t.TempDir(), "hf"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HELEXA_NUM_THREADS", "") // -t sets it for the engine; restored after the test
	var out bytes.Buffer
	opts := benchOptions{Model: model, NPrompt: 32, NumPredict: 40, Repetitions: 2, Threads: 1,
		Concurrency: []int{1, 3}, Prompt: "x", JSON: true}
	if err := runBench(context.Background(), opts, streams{Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var rep llamaBenchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if rep.Prefill.Test != "pp32" || rep.Decode.Test != "tg40" || len(rep.Prefill.Samples) != 2 || len(rep.Decode.Samples) != 2 ||
		rep.Prefill.Mean <= 0 || rep.Decode.Mean <= 0 || rep.Threads != "1" || rep.Kernels == "" || rep.Quant == "" ||
		rep.Processor != "CPU" {
		t.Errorf("report %+v", rep)
	}
	for _, l := range rep.Streams {
		if l.GeneratedTokens != l.Concurrency*40 || l.DecodeTPS <= 0 {
			t.Errorf("%d streams generated %d tokens (want exactly %d: EOS must not stop a benchmark)", l.Concurrency, l.GeneratedTokens, l.Concurrency*40)
		}
	}
}

// TestBenchLlamaDepth: -d runs both tests after a context of that many
// tokens and names them as llama-bench does; -d without -p is refused.
func TestBenchLlamaDepth(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	t.Setenv("HF_HUB_CACHE", filepath.Join(t.TempDir(), "hf"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HELEXA_NUM_THREADS", "")
	var out bytes.Buffer
	opts := benchOptions{Model: model, NPrompt: 8, NumPredict: 8, Depth: 40, Repetitions: 1, Threads: 1,
		Concurrency: []int{1}, Prompt: "x", JSON: true}
	if err := runBench(context.Background(), opts, streams{Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	var rep llamaBenchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if rep.Depth != 40 || rep.Prefill.Test != "pp8@d40" || rep.Decode.Test != "tg8@d40" || rep.Prefill.Mean <= 0 || rep.Decode.Mean <= 0 {
		t.Errorf("report %+v", rep)
	}
	opts.NPrompt = 0
	if err := runBench(context.Background(), opts, streams{Out: io.Discard, Err: io.Discard}); err == nil || !strings.Contains(err.Error(), "give -p") {
		t.Errorf("-d without -p: %v", err)
	}
}

// TestLlamaBenchHeader: the header names the GPU a model runs on instead of
// the CPU's threads and kernels, which play no part there.
func TestLlamaBenchHeader(t *testing.T) {
	tests := []struct {
		processor, want, notWant string
	}{
		{"CUDA:0 NVIDIA H200", "(Q4_K_M, 7 parameters), on CUDA:0 NVIDIA H200, 3 repetitions", "kernels"},
		{"CPU", "on CPU, threads 2, kernels c-avx512vnni, 3 repetitions", ""},
		{"", "(Q4_K_M, 7 parameters), threads 2, kernels c-avx512vnni, 3 repetitions", " on "},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		r := llamaBenchReport{Model: "m", Quant: "Q4_K_M", Parameters: 7, Processor: tt.processor, Threads: "2",
			Kernels: "c-avx512vnni", Repetitions: 3}
		if err := printLlamaBench(&out, r); err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(out.String(), "\n")
		if !strings.Contains(head, tt.want) || (tt.notWant != "" && strings.Contains(head, tt.notWant)) {
			t.Errorf("processor %q: header %q, want %q", tt.processor, head, tt.want)
		}
	}
}
