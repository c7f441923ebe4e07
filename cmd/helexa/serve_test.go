package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
)

func TestCheckBind(t *testing.T) {
	cases := []struct {
		addr, key string
		insecure  bool
		ok        bool
	}{
		{"127.0.0.1:13131", "", false, true},
		{"localhost:13131", "", false, true},
		{"[::1]:13131", "", false, true},
		{"0.0.0.0:13131", "", false, false},
		{":13131", "", false, false},
		{"192.168.1.5:13131", "", false, false},
		{"0.0.0.0:13131", "key", false, true},
		{"0.0.0.0:13131", "", true, true},
		{"nonsense", "", false, false},
	}
	for _, c := range cases {
		err := checkBind(c.addr, c.key, c.insecure)
		if (err == nil) != c.ok {
			t.Errorf("checkBind(%q, key=%q, insecure=%v) = %v", c.addr, c.key, c.insecure, err)
		}
		if err != nil && c.addr != "nonsense" && !strings.Contains(err.Error(), "HELEXA_API_KEY") {
			t.Errorf("refusal does not name the fix: %v", err)
		}
	}
}

// TestServeHTTPGraceful checks that a stop signal lets an in-flight request
// finish, and that one outliving the timeout is cancelled.
func TestServeHTTPGraceful(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		work      time.Duration
		wantDone  bool
		wantError bool
	}{
		{"finishes within the timeout", 5 * time.Second, 200 * time.Millisecond, true, false},
		{"cancelled after the timeout", 200 * time.Millisecond, time.Minute, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			result := make(chan string, 1)
			// a cancelled handler stays until serveHTTP has closed the
			// connection, so the client sees the cut and not an empty reply
			release := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(started)
				select {
				case <-time.After(tc.work):
					result <- "done"
					_, _ = io.WriteString(w, "done")
				case <-r.Context().Done():
					result <- "cancelled"
					<-release
				}
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- serveHTTP(ctx, ln, h, tc.timeout, false) }()
			resp := make(chan error, 1)
			go func() {
				r, err := http.Get("http://" + ln.Addr().String())
				if err == nil {
					r.Body.Close()
				}
				resp <- err
			}()
			<-started
			stop()
			err = <-served
			close(release)
			if err != nil {
				t.Fatalf("serveHTTP: %v", err)
			}
			got := <-result
			if (got == "done") != tc.wantDone {
				t.Errorf("handler %s", got)
			}
			if err := <-resp; (err != nil) != tc.wantError {
				t.Errorf("client error %v, want error=%v", err, tc.wantError)
			}
		})
	}
}

// psFake is the little Service `ps`/`stop` talk to in tests.
type psFake struct {
	engine.Service
	models   []engine.ModelStatus
	unloaded []string
}

func (f *psFake) PS(context.Context) ([]engine.ModelStatus, error) { return f.models, nil }

func (f *psFake) Unload(_ context.Context, m string) error {
	f.unloaded = append(f.unloaded, m)
	return nil
}

func startAPI(t *testing.T, svc engine.Service) string {
	t.Helper()
	s, err := api.NewServer(api.Config{Service: svc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestPsAndStop(t *testing.T) {
	t.Setenv("HELEXA_API_KEY", "")
	exp := time.Now().Add(4*time.Minute + 30*time.Second)
	f := &psFake{models: []engine.ModelStatus{
		{Name: "org/a:Q8_0", SizeBytes: 3 << 30, Processor: "CPU", Context: 4096, State: engine.StateReady, ExpiresAt: exp},
		{Name: "b.gguf", SizeBytes: 1 << 20, Processor: "GPU", Context: 2048, State: engine.StatePoisoned, Active: 0, Error: "CUDA illegal address"},
	}}
	host := startAPI(t, f)
	var out bytes.Buffer
	if err := runPs(context.Background(), psOptions{Host: host}, streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"NAME", "PROCESSOR", "UNTIL", "org/a:Q8_0", "3.0 GiB", "ready", "from now", "forever", "poisoned", "CUDA illegal address", "helexa stop"} {
		if !strings.Contains(text, want) {
			t.Errorf("ps output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := runPs(context.Background(), psOptions{Host: host, JSON: true}, streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	var got []engine.ModelStatus
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 2 || got[1].State != "poisoned" {
		t.Errorf("ps --json: %v %s", err, out.String())
	}
	out.Reset()
	if err := runStop(context.Background(), stopOptions{Host: host, Model: "org/a:Q8_0"}, streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if len(f.unloaded) != 1 || f.unloaded[0] != "org/a:Q8_0" || !strings.Contains(out.String(), "unloaded org/a:Q8_0") {
		t.Errorf("stop: %v %q", f.unloaded, out.String())
	}
}

func TestPsNoDaemon(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	err = runPs(context.Background(), psOptions{Host: addr}, streams{Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "no helexa daemon answers") || !strings.Contains(err.Error(), "serve --detach") {
		t.Errorf("err %v", err)
	}
	err = runStop(context.Background(), stopOptions{Host: addr, Model: "m"}, streams{Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "no helexa daemon answers") {
		t.Errorf("stop: %v", err)
	}
}

func TestUntil(t *testing.T) {
	now := time.Unix(1000, 0)
	cases := []struct {
		m    engine.ModelStatus
		want string
	}{
		{engine.ModelStatus{State: engine.StateLoading}, "-"},
		{engine.ModelStatus{State: engine.StateReady, Active: 2}, "in use"},
		{engine.ModelStatus{State: engine.StateReady}, "forever"},
		{engine.ModelStatus{State: engine.StateReady, ExpiresAt: now.Add(90 * time.Second)}, "1m30s from now"},
		{engine.ModelStatus{State: engine.StateReady, ExpiresAt: now.Add(-time.Second)}, "now"},
	}
	for _, c := range cases {
		if got := until(c.m, now); got != c.want {
			t.Errorf("until(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
}

func TestBenchSummary(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	runs := []benchRun{
		{start: at(0), first: at(100), end: at(1100), res: engine.Result{Usage: engine.Usage{CompletionTokens: 11, DecodeDuration: time.Second}}},
		{start: at(0), first: at(300), end: at(2100), res: engine.Result{Usage: engine.Usage{CompletionTokens: 21, DecodeDuration: 2 * time.Second}}},
	}
	lv := summarizeBench(2, runs, 2100*time.Millisecond)
	// 10 + 20 decode tokens over the 2 s window from the first first-token (100 ms) to the last end (2100 ms);
	// per sequence 10 tokens in 1 s and 20 in 1.8 s.
	if lv.GeneratedTokens != 32 || lv.DecodeTPS != 15 || math.Abs(lv.PerSeqDecodeTPS-(10+20/1.8)/2) > 1e-9 || lv.MeanTTFTMillis != 200 {
		t.Errorf("summary %+v", lv)
	}
	// One sequence: its own rate and the aggregate are the same figure.
	one := summarizeBench(1, runs[:1], 1100*time.Millisecond)
	if one.DecodeTPS != 10 || one.PerSeqDecodeTPS != one.DecodeTPS {
		t.Errorf("one sequence: aggregate %v, per sequence %v, want both 10", one.DecodeTPS, one.PerSeqDecodeTPS)
	}
	var out bytes.Buffer
	if err := printBench(&out, benchHeader{Model: "m"}, []benchLevel{lv}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if agg, per := strings.Index(text, "AGGREGATE DECODE tok/s"), strings.Index(text, "PER-STREAM tok/s"); agg < 0 || per < agg || !strings.Contains(text, "15.0") {
		t.Errorf("the table should lead with the aggregate decode rate:\n%s", text)
	}
}

// TestServeDetachAndStop runs `helexa serve --detach` and `--stop` for real.
func TestServeDetachAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "helexa")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building helexa: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	state := filepath.Join(dir, "state")
	// No HELEXA_HOST: the clients find the daemon through its pid file.
	env := append(os.Environ(), "HELEXA_STATE_DIR="+state, "HELEXA_API_KEY=",
		"HF_HUB_CACHE="+filepath.Join(dir, "hf"), "HF_HUB_OFFLINE=1")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("serve", "--detach", "--host", addr)
	if err != nil || !strings.Contains(out, "listening on http://"+addr) {
		t.Fatalf("--detach: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = run("serve", "--stop") })
	if _, err := os.Stat(filepath.Join(state, daemonPIDFile)); err != nil {
		t.Errorf("no pid file: %v", err)
	}
	if out, err := run("serve", "--detach"); err == nil || !strings.Contains(out, "already running") {
		t.Errorf("second --detach: %v\n%s", err, out)
	}
	if out, err := run("ps", "--verbose"); err != nil || !strings.Contains(out, "NAME") || !strings.Contains(out, "using the helexa daemon at http://"+addr+" (from the pid file") {
		t.Errorf("ps: %v\n%s", err, out)
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	if out, err := run("run", model, "--raw", "--verbose", "-n", "2", "Once upon a time"); err != nil ||
		!strings.Contains(out, "using the helexa daemon at http://"+addr) || strings.Contains(out, "in this process") {
		t.Errorf("run through the detached daemon: %v\n%s", err, out)
	}
	if out, err := run("ps"); err != nil || !strings.Contains(out, "\nstories260K.gguf ") {
		t.Errorf("ps does not show the model by its file name: %v\n%s", err, out)
	}
	if out, err := run("stop", "stories260K.gguf"); err != nil || out != "unloaded stories260K.gguf\n" {
		t.Errorf("stop by file name: %v\n%s", err, out)
	}
	if out, err := run("serve", "--stop"); err != nil || !strings.Contains(out, "stopped helexa daemon") {
		t.Errorf("--stop: %v\n%s", err, out)
	}
	c, _ := api.NewClient(addr, "")
	if err := c.Health(context.Background()); !errors.Is(err, api.ErrUnreachable) {
		t.Errorf("daemon still answers after --stop: %v", err)
	}
	if out, err := run("serve", "--stop"); err == nil || !strings.Contains(out, "no helexa daemon is running") {
		t.Errorf("second --stop: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(state, daemonLogFile)); err != nil || !strings.Contains(string(b), "helexa stopped") {
		t.Errorf("daemon log: %v\n%s", err, b)
	}
}

func TestStopNames(t *testing.T) {
	t.Setenv("HELEXA_API_KEY", "")
	tests := []struct {
		name, arg string
		unloaded  string // "" = nothing
		errText   string
	}{
		{"by name", "org/a:Q8_0", "org/a:Q8_0", ""},
		{"by path", "/cache/a.gguf", "org/a:Q8_0", ""},
		{"not loaded", "org/b:Q4_K_M", "", `model "org/b:Q4_K_M" is not loaded; ` + "`helexa ps`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &psFake{models: []engine.ModelStatus{{Name: "org/a:Q8_0", Path: "/cache/a.gguf", State: engine.StateReady}}}
			host := startAPI(t, f)
			var out bytes.Buffer
			err := runStop(context.Background(), stopOptions{Host: host, Model: tt.arg}, streams{Out: &out})
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err %v, want %q", err, tt.errText)
				}
				if len(f.unloaded) != 0 {
					t.Errorf("unloaded %v", f.unloaded)
				}
				return
			}
			if err != nil || len(f.unloaded) != 1 || f.unloaded[0] != tt.unloaded || out.String() != "unloaded "+tt.unloaded+"\n" {
				t.Errorf("err %v, unloaded %v, output %q", err, f.unloaded, out.String())
			}
		})
	}
	var errOut bytes.Buffer
	root := newRootCmd(streams{Out: io.Discard, Err: &errOut})
	root.SetArgs([]string{"stop"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "helexa ps") {
		t.Errorf("stop without a model: %v", err)
	}
}
