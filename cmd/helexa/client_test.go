package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// recordDaemon writes a pid file in a fresh state directory naming a
// daemon at addr: this test process when alive, else a record no live
// process matches.
func recordDaemon(t *testing.T, addr string, alive bool) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HELEXA_STATE_DIR", dir)
	rec := selfRecord(addr)
	if !alive {
		rec.Start = "1" // this pid, but not this process: a recycled pid
	}
	path := filepath.Join(dir, daemonPIDFile)
	if err := writePIDFile(path, rec); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestPickDaemon: --host, then HELEXA_HOST, then the running detached
// daemon's pid file, then the default.
func TestPickDaemon(t *testing.T) {
	tests := []struct {
		name       string
		flag, env  string
		pid        string // "alive", "stale" or "" (no pid file)
		want, from string
	}{
		{"flag wins", "127.0.0.1:1", "127.0.0.1:2", "alive", "127.0.0.1:1", "--host"},
		{"environment next", "", "127.0.0.1:2", "alive", "127.0.0.1:2", "$HELEXA_HOST"},
		{"the detached daemon's address", "", "", "alive", "127.0.0.1:18472", "the pid file "},
		{"a stale pid file is ignored", "", "", "stale", "127.0.0.1:13131", "the default address"},
		{"nothing set", "", "", "", "127.0.0.1:13131", "the default address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELEXA_HOST", tt.env)
			if tt.pid == "" {
				t.Setenv("HELEXA_STATE_DIR", t.TempDir())
			} else {
				recordDaemon(t, "127.0.0.1:18472", tt.pid == "alive")
			}
			got := pickDaemon(tt.flag)
			if got.Addr != tt.want || !strings.HasPrefix(got.From, tt.from) {
				t.Errorf("picked %s (from %s), want %s (from %s…)", got.Addr, got.From, tt.want, tt.from)
			}
		})
	}
}

// TestClientsFindDetachedDaemon: with HELEXA_HOST unset, ps and stop talk
// to the daemon the pid file names, and --verbose says so.
func TestClientsFindDetachedDaemon(t *testing.T) {
	t.Setenv("HELEXA_HOST", "")
	t.Setenv("HELEXA_API_KEY", "")
	f := &psFake{models: []engine.ModelStatus{{Name: "/home/u/models/stories260K.gguf", Path: "/home/u/models/stories260K.gguf", State: engine.StateReady}}}
	url := startAPI(t, f)
	pidFile := recordDaemon(t, strings.TrimPrefix(url, "http://"), true)
	var out, errb bytes.Buffer
	if err := runPs(context.Background(), psOptions{Verbose: true}, streams{Out: &out, Err: &errb}); err != nil {
		t.Fatal(err)
	}
	checkContains(t, "ps output", out.String(), "stories260K.gguf")
	if strings.Contains(out.String(), "/home/u/models") {
		t.Errorf("ps shows the full path of a local model:\n%s", out.String())
	}
	checkContains(t, "ps --verbose stderr", errb.String(), "using the helexa daemon at "+url, "the pid file "+pidFile)
	out.Reset()
	if err := runStop(context.Background(), stopOptions{Model: "stories260K.gguf"}, streams{Out: &out, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if len(f.unloaded) != 1 || f.unloaded[0] != "/home/u/models/stories260K.gguf" || out.String() != "unloaded stories260K.gguf\n" {
		t.Errorf("stop by short name: unloaded %v, printed %q", f.unloaded, out.String())
	}
}

// TestNoDaemonAdvice: when nobody answers, the error names the daemon
// that runs elsewhere, or says how to start one.
func TestNoDaemonAdvice(t *testing.T) {
	dead := freeAddr(t)
	tests := []struct {
		name    string
		env     string
		pid     string // the recorded daemon's address ("" = none)
		want    []string
		notWant string
	}{
		{"none runs", dead, "", []string{"no helexa daemon answers at http://" + dead + " (from $HELEXA_HOST)", "serve --detach"}, "pid"},
		{"one runs elsewhere", dead, "127.0.0.1:18472", []string{"listens on 127.0.0.1:18472", "--host 127.0.0.1:18472", "unset HELEXA_HOST"}, "serve --detach"},
		{"the recorded one is silent", "", dead, []string{"(from the pid file", "does not answer", "serve.log"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELEXA_HOST", tt.env)
			if tt.pid != "" {
				recordDaemon(t, tt.pid, true)
			} else {
				t.Setenv("HELEXA_STATE_DIR", t.TempDir())
			}
			err := runPs(context.Background(), psOptions{}, streams{Out: io.Discard, Err: io.Discard})
			if err == nil {
				t.Fatal("ps succeeded with no daemon")
			}
			checkContains(t, "error", err.Error(), tt.want...)
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error mentions %q: %v", tt.notWant, err)
			}
		})
	}
}

// TestStopTarget: stop takes a model as ps shows it, or its full name or
// path.
func TestStopTarget(t *testing.T) {
	loaded := []engine.ModelStatus{
		{Name: "org/a:Q8_0", Path: "/cache/a.gguf"},
		{Name: "/m/one/x.gguf", Path: "/m/one/x.gguf"},
		{Name: "/m/two/x.gguf", Path: "/m/two/x.gguf"},
		{Name: "/m/stories260K.gguf", Path: "/m/stories260K.gguf"},
	}
	tests := []struct {
		arg, want, err string
	}{
		{"org/a:Q8_0", "org/a:Q8_0", ""},
		{"/cache/a.gguf", "org/a:Q8_0", ""},
		{"stories260K.gguf", "/m/stories260K.gguf", ""},
		{"/m/stories260K.gguf", "/m/stories260K.gguf", ""},
		{"x.gguf", "", `"x.gguf" names 2 loaded models; give the full path: /m/one/x.gguf, /m/two/x.gguf`},
		{"nope.gguf", "", `model "nope.gguf" is not loaded`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := stopTarget(tt.arg, loaded)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("stopTarget(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
			}
		})
	}
}

// TestPsNames: local models by their file name unless two share it;
// references as they are.
func TestPsNames(t *testing.T) {
	tests := []struct {
		name   string
		models []string
		want   []string
	}{
		{"reference", []string{"Qwen/Qwen3-0.6B-GGUF:Q8_0"}, []string{"Qwen/Qwen3-0.6B-GGUF:Q8_0"}},
		{"local file", []string{"/work/shared/fixtures/models/stories260K.gguf"}, []string{"stories260K.gguf"}},
		{"local directory", []string{"/models/qwen3"}, []string{"qwen3"}},
		{"same file name twice", []string{"/a/x.gguf", "/b/x.gguf", "/c/y.gguf"}, []string{"/a/x.gguf", "/b/x.gguf", "y.gguf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ms []engine.ModelStatus
			for _, n := range tt.models {
				ms = append(ms, engine.ModelStatus{Name: n})
			}
			got := psNames(ms)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("names %q, want %q", got, tt.want)
			}
		})
	}
}

func checkContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}
