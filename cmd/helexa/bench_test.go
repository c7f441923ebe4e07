package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
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
				for _, want := range []string{"model stories260K.gguf (", "parameters), on CPU, threads ", "kernels ", "AGGREGATE DECODE tok/s"} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("table lacks %q:\n%s", want, out.String())
					}
				}
				var rows []string
				for _, l := range strings.Split(out.String(), "\n") {
					if f := strings.Fields(l); len(f) == 7 && (f[0] == "1" || f[0] == "3") {
						rows = append(rows, f[0])
					}
				}
				if strings.Join(rows, ",") != "1,3" {
					t.Errorf("table rows %v, want levels 1 and 3:\n%s", rows, out.String())
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

// TestBenchHeader: both modes start with the same header: the quant, a
// humanized parameter count, the threads as a number and the kernels;
// on a GPU its name instead of the CPU's threads and kernels.
func TestBenchHeader(t *testing.T) {
	tests := []struct {
		name, processor, want, notWant string
	}{
		{"gpu", "CUDA:0 NVIDIA H200", "model m.gguf (Q4_K_M, 1.50B parameters), on CUDA:0 NVIDIA H200", "kernels"},
		{"cpu", "CPU", "model m.gguf (Q4_K_M, 1.50B parameters), on CPU, threads 2, kernels c-avx512vnni", ""},
		{"unknown", "", "model m.gguf (Q4_K_M, 1.50B parameters), threads 2, kernels c-avx512vnni", " on "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := benchHeader{Model: "/models/m.gguf", Quant: "Q4_K_M", Parameters: 1_500_000_000, Processor: tt.processor, Threads: "2",
				Kernels: "c-avx512vnni"}
			var llama, table bytes.Buffer
			if err := printLlamaBench(&llama, llamaBenchReport{benchHeader: h, Repetitions: 3}); err != nil {
				t.Fatal(err)
			}
			if err := printBench(&table, h, nil); err != nil {
				t.Fatal(err)
			}
			for mode, out := range map[string]string{"-p mode": llama.String(), "default mode": table.String()} {
				head, _, _ := strings.Cut(out, "\n")
				if !strings.HasPrefix(head, tt.want) || (tt.notWant != "" && strings.Contains(head, tt.notWant)) {
					t.Errorf("%s header %q, want it to start with %q", mode, head, tt.want)
				}
			}
			if head, _, _ := strings.Cut(llama.String(), "\n"); !strings.HasSuffix(head, ", 3 repetitions") {
				t.Errorf("-p mode header %q lacks the repetitions", head)
			}
		})
	}
}

// TestBenchThreads: the header's threads are always a number for the
// in-process engine.
func TestBenchThreads(t *testing.T) {
	tests := []struct {
		name string
		opts benchOptions
		env  string
		want string
	}{
		{"-t", benchOptions{Threads: 3}, "5", "3"},
		{"HELEXA_NUM_THREADS", benchOptions{}, "5", "5"},
		{"all cores", benchOptions{}, "", strconv.Itoa(runtime.NumCPU())},
		{"a daemon", benchOptions{Host: "127.0.0.1:1"}, "", "daemon's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELEXA_NUM_THREADS", tt.env)
			if got := benchThreads(tt.opts); got != tt.want {
				t.Errorf("threads %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBenchValidate: a bad flag is named with its range, alone.
func TestBenchValidate(t *testing.T) {
	good := benchOptions{Concurrency: []int{1}, NumPredict: 8, Repetitions: 5}
	tests := []struct {
		name string
		mut  func(*benchOptions)
		want string // "" = valid
	}{
		{"defaults", func(*benchOptions) {}, ""},
		{"-r 0", func(o *benchOptions) { o.Repetitions = 0 }, "-r/--repetitions 0 is out of range: want at least 1"},
		{"-t -1", func(o *benchOptions) { o.Threads = -1 }, "-t/--threads -1 is out of range"},
		{"-p -5", func(o *benchOptions) { o.NPrompt = -5 }, "-p/--n-prompt -5 is out of range"},
		{"-n 0", func(o *benchOptions) { o.NumPredict = 0 }, "-n/--num-predict 0 is out of range: want at least 1 token"},
		{"--temperature -1", func(o *benchOptions) { o.Temperature = -1 }, "--temperature -1 is out of range"},
		{"no levels", func(o *benchOptions) { o.Concurrency = nil }, "--concurrency needs at least one level"},
		{"level 0", func(o *benchOptions) { o.Concurrency = []int{0} }, "--concurrency level 0 is out of range"},
		{"-d without -p", func(o *benchOptions) { o.Depth = 4 }, "give -p too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.mut(&o)
			err := o.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if n := strings.Count(err.Error(), "want"); n > 1 {
				t.Errorf("the error states %d rules, want only the bad flag's: %v", n, err)
			}
		})
	}
}
