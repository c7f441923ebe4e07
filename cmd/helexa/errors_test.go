package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs helexa with args in this process as main does and returns
// what the user sees on stderr, with the exit status.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	root.SetArgs(args)
	ctx := context.Background()
	cmd, err := root.ExecuteContextC(ctx)
	code := exitStatus(ctx, err, &errb, verboseErrors(cmd))
	return errb.String(), code
}

// errorLine is the "Error: …" line of stderr.
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Error: ") {
			return l
		}
	}
	return ""
}

// TestErrorMessages: the common failures of every command, as the user
// reads them on stderr: what failed, why and what to do, said once, with
// no raw Go error (stat …, Get "https://…", dial tcp …) unless --verbose
// asks for the cause.
func TestErrorMessages(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "notgguf.gguf")
	ggufDir := filepath.Join(dir, "models")
	if err := os.MkdirAll(ggufDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{notGGUF: "hi\n", filepath.Join(ggufDir, "m-Q8_0.gguf"): "x", filepath.Join(ggufDir, "m-Q4_0.gguf"): "x"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const unreachable = "Error: org/m is not in the local cache and cannot reach 127.0.0.1:1 (connection refused): check the network or HF_ENDPOINT; offline, HF_HUB_OFFLINE=1 uses the cache"
	offline := fmt.Sprintf("Error: not in the local cache: org/m@main has never been pulled into %s (HF_HUB_OFFLINE=1 keeps helexa off the network); unset HF_HUB_OFFLINE and run `helexa pull org/m`",
		filepath.Join(os.Getenv("HF_HUB_CACHE")))
	online := map[string]string{"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:1"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().String()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    string   // the whole Error line
		prefix  string   // or its start
		stderr  []string // more that stderr shows
		once    string   // said exactly once on stderr
		noCause bool     // no raw Go error on stderr
	}{
		{name: "run: missing file", args: []string{"run", "./no/such.gguf", "hi"},
			want: "Error: ./no/such.gguf does not exist: check the path (a Hub model is org/name[:QUANT]; `helexa list` shows the cached ones)", once: "no/such.gguf", noCause: true},
		{name: "pull: missing file", args: []string{"pull", filepath.Join(dir, "none.gguf")},
			want: "Error: " + filepath.Join(dir, "none.gguf") + " does not exist: check the path (a Hub model is org/name[:QUANT]; `helexa list` shows the cached ones)", noCause: true},
		{name: "run: not a GGUF", args: []string{"run", notGGUF, "hi"},
			want: "Error: invalid GGUF file: " + notGGUF + " is 3 bytes, too small for a GGUF header", once: notGGUF, noCause: true},
		{name: "bench: not a GGUF", args: []string{"bench", notGGUF},
			want: "Error: invalid GGUF file: " + notGGUF + " is 3 bytes, too small for a GGUF header", once: notGGUF, noCause: true},
		{name: "run: DIR:QUANT, a quant the folder lacks", args: []string{"run", ggufDir + ":Q9", "hi"},
			want: `Error: quant "Q9" not found in ` + ggufDir + "; available quants: Q4_0, Q8_0"},
		{name: "run: a quant after a file", args: []string{"run", notGGUF + ":Q8_0", "hi"},
			want: "Error: invalid model reference: " + notGGUF + " is a file, and :Q8_0 picks a quant among a directory's GGUF files; drop the :Q8_0"},
		{name: "run: not a reference", args: []string{"run", "nosuch", "hi"},
			prefix: `Error: unknown model "nosuch": not an alias, a local file or a Hugging Face repo id (org/name, e.g. Qwen/Qwen3-0.6B-GGUF) (known aliases: `, once: `unknown model "nosuch"`},
		{name: "run: no network", args: []string{"run", "org/m", "hi"}, env: online, want: unreachable, noCause: true},
		{name: "pull: no network", args: []string{"pull", "org/m"}, env: online, want: unreachable, noCause: true},
		{name: "run --verbose: no network, with the cause", args: []string{"run", "--verbose", "org/m", "hi"}, env: online, want: unreachable,
			stderr: []string{"\nCause: ", "\nNetwork error: ", "dial tcp 127.0.0.1:1"}},
		{name: "pull with HELEXA_LOG_LEVEL=debug: the cause", args: []string{"pull", "org/m"}, env: map[string]string{"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:1", "HELEXA_LOG_LEVEL": "debug"},
			want: unreachable, stderr: []string{"\nCause: "}},
		{name: "run: offline, not cached", args: []string{"run", "org/m", "hi"}, want: offline},
		{name: "pull: offline, not cached", args: []string{"pull", "org/m"}, want: offline},
		{name: "rm: not cached", args: []string{"rm", "org/m"}, want: "Error: not in the local cache: org/m (`helexa list` shows what is)"},
		{name: "rm: a local path", args: []string{"rm", notGGUF},
			want: "Error: invalid model reference: " + notGGUF + " is a local path, not a model in the cache: rm removes cached models only; delete the file yourself", once: notGGUF},
		{name: "ps: no daemon", args: []string{"ps"},
			want: "Error: no helexa daemon answers at http://127.0.0.1:1 (from $HELEXA_HOST): start one with `helexa serve --detach` (or point HELEXA_HOST / --host at a running one)"},
		{name: "serve: bad address", args: []string{"serve", "--host", "nonsense"},
			want: `Error: listen address "nonsense" is not host:port (e.g. 127.0.0.1:13131)`, noCause: true},
		{name: "tp: one rank", args: []string{"tp", "m.gguf", "--size", "1"}, want: "Error: --size 1 is out of range: want 2 to 16 ranks (one rank is helexa run)"},
		{name: "tp: a GPU", args: []string{"tp", "m.gguf", "--device", "cuda"},
			want: "Error: --device cuda: tp runs its ranks on the CPU only (--device cpu); the CUDA runner does not split a model, so run it on one GPU with `helexa run --device cuda`"},
		{name: "tp: the old --devices", args: []string{"tp", "m.gguf", "--devices", "cuda:1"}, prefix: "Error: --device cuda:1: tp runs its ranks on the CPU only"},
		{name: "run --host: nobody there", args: []string{"run", "--host", "127.0.0.1:1", notGGUF, "hi"},
			want: "Error: no helexa daemon answers at http://127.0.0.1:1 (from --host): start one with `helexa serve --detach` (or point HELEXA_HOST / --host at a running one)"},
		{name: "serve: address in use", args: []string{"serve", "--host", busy},
			want: "Error: cannot listen on " + busy + ": the address is in use (by another helexa serve? `helexa serve --stop` stops the detached one; --host picks another address)", noCause: true},
		{name: "debug info: missing file", args: []string{"debug", "info", "no.gguf"}, want: "Error: no.gguf does not exist: check the path", noCause: true},
		{name: "debug logits: not a GGUF", args: []string{"debug", "logits", notGGUF, "--tokens", "1"},
			want: "Error: invalid GGUF file: " + notGGUF + " is 3 bytes, too small for a GGUF header", once: notGGUF},
		{name: "debug tokenize: missing file", args: []string{"debug", "tokenize", "no.gguf"}, want: "Error: no.gguf does not exist: check the path", noCause: true},
		{name: "mistyped command", args: []string{"runn"}, want: "Error: unknown command \"runn\" (did you mean run?); `helexa --help` lists the commands"},
		{name: "not a number", args: []string{"run", "m.gguf", "-n", "abc"}, want: `Error: -n/--num-predict "abc" is not a whole number`, noCause: true},
		{name: "not a duration", args: []string{"serve", "--shutdown-timeout", "x"}, want: `Error: --shutdown-timeout "x" is not a duration such as 30s, 5m or 1h`},
		{name: "mistyped flag", args: []string{"run", "m.gguf", "--tempreature", "0"}, want: "Error: unknown flag: --tempreature (did you mean --temperature?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			stderr, code := runCLI(t, tt.args...)
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			got := errorLine(stderr)
			if tt.want != "" && got != tt.want {
				t.Errorf("helexa %s:\n got %s\nwant %s", strings.Join(tt.args, " "), got, tt.want)
			}
			if tt.prefix != "" && !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("helexa %s:\n got %s\nwant %s…", strings.Join(tt.args, " "), got, tt.prefix)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if tt.once != "" && strings.Count(stderr, tt.once) != 1 {
				t.Errorf("stderr says %q %d times, want once:\n%s", tt.once, strings.Count(stderr, tt.once), stderr)
			}
			if tt.noCause {
				for _, raw := range []string{"Cause:", "stat ", "Get \"", "dial tcp", "no such file or directory", "missing port in address", "strconv."} {
					if strings.Contains(stderr, raw) {
						t.Errorf("stderr shows the raw error (%q):\n%s", raw, stderr)
					}
				}
			}
		})
	}
}

// TestRunPullSameMessage: run and pull say the same thing about a model
// they cannot get, so a hint one gives is never missing from the other.
func TestRunPullSameMessage(t *testing.T) {
	isolate(t)
	for _, env := range []map[string]string{{"HF_HUB_OFFLINE": "1"}, {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:1"}} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		run, _ := runCLI(t, "run", "org/m:Q8_0", "hi")
		pull, _ := runCLI(t, "pull", "org/m:Q8_0")
		if errorLine(run) == "" || errorLine(run) != errorLine(pull) {
			t.Errorf("%v: run says\n  %s\npull says\n  %s", env, errorLine(run), errorLine(pull))
		}
	}
}

// TestModelErrorKeepsCancellation: a cancelled load stays a cancellation
// (exit status 130, nothing printed), not a reworded error.
func TestModelErrorKeepsCancellation(t *testing.T) {
	err := modelError("loading", "m.gguf", fmt.Errorf("loading m.gguf: %w", context.Canceled))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("modelError lost the cancellation: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errb bytes.Buffer
	if code := exitStatus(ctx, err, &errb, false); code != 130 || errb.Len() != 0 {
		t.Errorf("exit status %d, stderr %q; want 130 and nothing", code, errb.String())
	}
}

// TestSayOnce: the wrappers that only repeat the model's name are
// dropped; one that adds a hint after the inner text is kept.
func TestSayOnce(t *testing.T) {
	inner := errors.New("invalid GGUF file: /m/x.gguf is 3 bytes")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"prefixes dropped", fmt.Errorf("loading /m/x.gguf: %w", fmt.Errorf("opening /m/x.gguf failed: %w", inner)), inner.Error()},
		{"a hint after is kept", fmt.Errorf("%w (known aliases: a, b)", inner), inner.Error() + " (known aliases: a, b)"},
		{"an inner text without the name stays wrapped", fmt.Errorf("loading /m/x.gguf failed: %w", errors.New("out of memory")), "loading /m/x.gguf failed: out of memory"},
		{"a raw path error is not what is left", fmt.Errorf("reading /m/x.gguf: %w", &os.PathError{Op: "open", Path: "/m/x.gguf", Err: os.ErrPermission}),
			"reading /m/x.gguf: open /m/x.gguf: permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sayOnce(tt.err, []string{"/m/x.gguf"}); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDropEchoes: an error that comes back from a daemon as text loses the
// leading wrappers that only name the model again.
func TestDropEchoes(t *testing.T) {
	names := refNames("org/m")
	tests := []struct{ in, want string }{
		{"pulling org/m: pull org/m: org/m has no Q9; available quants: Q8_0", "org/m has no Q9; available quants: Q8_0"},
		{"pulling org/m: pull org/m: cannot reach huggingface.co (DNS lookup failed): check the network",
			"cannot reach huggingface.co (DNS lookup failed): check the network"},
		{"model file org/m does not exist: stat org/m: no such file", "model file org/m does not exist: stat org/m: no such file"},
		{"invalid model reference: org/m has several GGUF files", "invalid model reference: org/m has several GGUF files"},
	}
	for _, tt := range tests {
		if got := dropEchoes(tt.in, names); got != tt.want {
			t.Errorf("dropEchoes(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	err := modelError("pulling", "org/m", errors.New("pull org/m: cannot reach huggingface.co (DNS lookup failed): check the network"))
	if want := "org/m is not in the local cache and cannot reach huggingface.co (DNS lookup failed): check the network"; err.Error() != want {
		t.Errorf("a daemon's unreachable Hub:\n got %q\nwant %q", err, want)
	}
}
