// Package envvars is the one place where every HELEXA_* environment variable
// (and the Hugging Face variables helexa honours) is declared, with the
// description that `helexa --help` shows (tests-only variables are declared
// too, and hidden from it).
package envvars

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Var is one environment variable.
type Var struct {
	Name        string
	Default     string
	Description string
}

// Get returns the variable's value, or its default when unset or empty.
func (v Var) Get() string {
	if s := os.Getenv(v.Name); s != "" {
		return s
	}
	return v.Default
}

// IsSet reports whether the variable is set to a non-empty value (as
// opposed to falling back on its default).
func (v Var) IsSet() bool { return os.Getenv(v.Name) != "" }

// Int returns the variable's value (or default) as a non-negative integer;
// an unset variable without a default is 0. A malformed value is an error
// naming the variable.
func (v Var) Int() (int, error) {
	s := strings.TrimSpace(v.Get())
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer", v.Name, s)
	}
	return n, nil
}

// The variables.
var (
	Host            = Var{"HELEXA_HOST", "127.0.0.1:13131", "address the daemon listens on and clients (run, ps, stop) talk to; unset, clients use the detached daemon's address from its pid file"}
	AllowedHosts    = Var{"HELEXA_ALLOWED_HOSTS", "", "extra Host names the daemon answers to, comma-separated (loopback addresses and localhost always; guards against DNS rebinding)"}
	Origins         = Var{"HELEXA_ORIGINS", "", "extra browser origins allowed to call the daemon, comma-separated, * wildcards (localhost origins always; e.g. https://app.example.com)"}
	APIKey          = Var{"HELEXA_API_KEY", "", "bearer token the daemon requires from clients (and clients send); empty disables auth"}
	MaxRequestBytes = Var{"HELEXA_MAX_REQUEST_BYTES", "4194304", "largest request body the daemon reads, in bytes (413 beyond)"}
	KeepAlive       = Var{"HELEXA_KEEP_ALIVE", "5m", "how long an idle model stays loaded (0 unloads after each request; negative keeps forever)"}
	MaxLoadedModels = Var{"HELEXA_MAX_LOADED_MODELS", "3", "maximum number of models the daemon keeps loaded at once"}
	NumParallel     = Var{"HELEXA_NUM_PARALLEL", "8", "maximum sequences a loaded model decodes at once (continuous batching)"}
	MaxQueue        = Var{"HELEXA_MAX_QUEUE", "64", "requests that may wait for a slot before the daemon answers 503"}
	NumCtx          = Var{"HELEXA_NUM_CTX", "4096", "default context size (tokens) when a request or flag does not set one"}
	ChunkSize       = Var{"HELEXA_CHUNK_SIZE", "512", "prefill chunk size in tokens"}
	KVType          = Var{"HELEXA_KV_TYPE", "f16", "element type of the KV cache: f16 (as llama.cpp and ollama), or f32 (twice the memory; logits without F16 rounding)"}
	TP              = Var{"HELEXA_TP", "1", "tensor-parallel ranks a model is split over when a load does not say (1 = no split; see helexa tp)"}
	CPUKernels      = Var{"HELEXA_CPU_KERNELS", "auto", "CPU kernels: auto (the fastest this CPU has), avx512 (AVX-512 VNNI matmuls and vector attention), avx2 (AVX2+FMA matmuls), exact (the C kernels, bit-identical to portable), portable (pure Go); for checking one path against another"}
	NumThreads      = Var{"HELEXA_NUM_THREADS", "", "CPU threads used for compute (default: all cores)"}
	Config          = Var{"HELEXA_CONFIG", "", "path of the config file (default: $XDG_CONFIG_HOME/helexa/config.json)"}
	StateDir        = Var{"HELEXA_STATE_DIR", "", "directory for the daemon's pid and log files and the chat history (default: $XDG_STATE_HOME/helexa)"}
	LogLevel        = Var{"HELEXA_LOG_LEVEL", "info", "log level: debug, info, warn, error; at debug a command's error is followed by its underlying cause"}
	Runner          = Var{"HELEXA_RUNNER", "process", "where serve runs each loaded model: process (its own runner process, restarted if it dies) or inprocess (inside the daemon)"}
	Device          = Var{"HELEXA_DEVICE", "auto", "where models run: auto (a CUDA GPU when the helexa-cuda runner and an NVIDIA driver are found, else the CPU), cpu, cuda or cuda:N"}
	CUDARunner      = Var{"HELEXA_CUDA_RUNNER", "", "path of the helexa-cuda runner binary (default: next to helexa, then $PATH)"}
	RunnerProfile   = Var{"HELEXA_RUNNER_PROFILE", "", "write a CPU profile of every runner process (helexa runner, helexa-cuda) to this path plus .PID, for go tool pprof"}
	CUDAPTX         = Var{"HELEXA_CUDA_PTX", "", "1 = helexa-cuda loads its kernels from PTX, compiled by the driver for the GPU, even where machine code for it (sm_80, sm_90) is shipped"}
	CUDAGraphs      = Var{"HELEXA_CUDA_GRAPHS", "1", "0 = helexa-cuda sends every kernel launch on its own instead of replaying the repeated runs of launches of decode steps as CUDA graphs"}
	CUDAPDL         = Var{"HELEXA_CUDA_PDL", "1", "0 = helexa-cuda's graphs start each kernel only once the one before it has finished, instead of letting it start and fetch its weights while that one runs (programmatic dependent launch; GPUs of compute capability 9.0 and later)"}
	CUDATimes       = Var{"HELEXA_CUDA_TIMES", "", "time every GPU kernel of every helexa-cuda runner (events around each launch; slows the runner) and keep a table of them in this path plus .PID"}
	RunnerTimeout   = Var{"HELEXA_RUNNER_TIMEOUT", "5m", "how long serve waits for a runner's reply to one step before killing it and poisoning the model"}
	HFHubCache      = Var{"HF_HUB_CACHE", "", "Hugging Face cache root (models--org--name directories)"}
	HFHome          = Var{"HF_HOME", "", "Hugging Face home; the cache is $HF_HOME/hub and the token $HF_HOME/token"}
	HFEndpoint      = Var{"HF_ENDPOINT", "https://huggingface.co", "Hugging Face endpoint (mirrors)"}
	HFToken         = Var{"HF_TOKEN", "", "Hugging Face access token for gated or private repos"}
	HFOffline       = Var{"HF_HUB_OFFLINE", "", "1 = never touch the network; resolve models from the cache only"}
	HFNoProgress    = Var{"HF_HUB_DISABLE_PROGRESS_BARS", "", "1 = no progress bars"}
	ChatTemplate    = Var{"HELEXA_CHAT_TEMPLATE", "", "path of a Jinja chat template used instead of every model's own (its tool-call and reasoning formats are chosen from it)"}
)

// The variables only tests set: declared here like the others, so that
// every HELEXA_* name has one home, but left out of `helexa --help`.
var (
	CUDAFault  = Var{"HELEXA_CUDA_FAULT", "", "tests only: a file path; when the file exists, the CUDA runner removes it and makes a real device failure in its next forward pass"}
	TestReplay = Var{"HELEXA_TEST_REPLAY", "", "tests only: path of a text file every loaded model writes (encoded with its tokenizer, then end of sequence) instead of sampling; answers separated by <|helexa-replay-next|> lines are written in turn, one per generation"}
	Fixtures   = Var{"HELEXA_FIXTURES", "", "tests only: the shared fixtures directory (default: ../shared/fixtures beside the repository)"}
	TestBin    = Var{"HELEXA_TEST_BIN", "", "tests only: a built helexa binary the end-to-end tests start instead of building one (make test-gpu on a machine without Go)"}
	TestRunner = Var{"HELEXA_TEST_RUNNER", "", "tests only: 1 makes a package's test binary serve as a runner process"}
	TestAll    = Var{"HELEXA_TEST_ALL", "", "tests only: 1 runs the exhaustive matrices too (every fixture on the emulated GPU, every kernel level); make test-all sets it"}
)

// All lists every variable: the user's, in the order --help shows them,
// then the tests-only ones.
func All() []Var { return append(User(), TestsOnly()...) }

// User lists the variables a user may set, in the order --help shows them.
func User() []Var {
	return []Var{Host, AllowedHosts, Origins, APIKey, MaxRequestBytes, KeepAlive, MaxLoadedModels, NumParallel, MaxQueue, NumCtx, ChunkSize, KVType, TP, CPUKernels,
		NumThreads, Config, StateDir, LogLevel, Runner, Device, CUDARunner, RunnerProfile, CUDAPTX, CUDAGraphs, CUDAPDL, CUDATimes, RunnerTimeout, HFHubCache, HFHome, HFEndpoint, HFToken, HFOffline, HFNoProgress, ChatTemplate}
}

// TestsOnly lists the variables only tests set (hidden from --help).
func TestsOnly() []Var { return []Var{CUDAFault, TestReplay, Fixtures, TestBin, TestRunner, TestAll} }

// Help renders the table shown at the end of `helexa --help`: the user's
// variables.
func Help() string {
	var b strings.Builder
	b.WriteString("Environment variables:\n")
	for _, v := range User() {
		d := v.Description
		if v.Default != "" {
			d += fmt.Sprintf(" (default %q)", v.Default)
		}
		fmt.Fprintf(&b, "  %-30s %s\n", v.Name, d)
	}
	return b.String()
}
