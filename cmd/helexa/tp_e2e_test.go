package main

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
)

// TestTPOneShotMatchesRun: `helexa tp MODEL --size 2` answers a greedy
// prompt exactly as `helexa run` does, and leaves no worker behind.
func TestTPOneShotMatchesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	bin := buildRunBinary(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = runEnv(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helexa %s: %v\n%s", strings.Join(args, " "), err, errText(err))
		}
		return string(out)
	}
	common := []string{"--temperature", "0", "-n", "24", "--raw", "Once upon a time"}
	want := run(append([]string{"run", model}, common...)...)
	got := run(append([]string{"tp", model, "--size", "2"}, common...)...)
	if got != want || want == "" {
		t.Fatalf("helexa tp --size 2 printed %q, helexa run %q", got, want)
	}
	cmd := exec.Command(bin, "tp", model, "--size", "3", "hi")
	cmd.Env = runEnv(t)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "allowed sizes: 1, 2, 4") {
		t.Fatalf("--size 3 on a model with 8 heads: %v\n%s\nwant an error naming the allowed sizes", err, out)
	}
}

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestTPThroughServe: with HELEXA_TP=2 the daemon splits a model over two
// ranks (ps lists both pids); SIGKILL of rank 1 mid-stream ends the stream
// with an error within a second and poisons the model; the next request
// reloads it over two ranks with the same greedy output; /api/load can
// re-split an idle model and refuses a size the model does not allow; no
// process is left behind.
func TestTPThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, stop, logs := startDaemon(t, "", "HELEXA_TP=2")
	defer logOnFailure(t, logs)
	want := greedyText(t, addr, model)
	var pids []int
	for round := range 3 {
		ps := psModels(t, addr)
		if len(ps) != 1 || len(ps[0].Ranks) != 2 || ps[0].Processor != "TP×2 CPU" {
			t.Fatalf("round %d: ps %+v, want one model over 2 ranks", round, ps)
		}
		r := ps[0].Ranks
		if r[0].PID != ps[0].RunnerPID || r[1].PID == r[0].PID || ppidOf(t, r[1].PID) != r[0].PID {
			t.Fatalf("round %d: ranks %+v (runner %d): rank 0 must be the runner, rank 1 its child", round, r, ps[0].RunnerPID)
		}
		pids = append(pids, r[0].PID, r[1].PID)
		last, took := streamUntilKilled(t, addr, model, r[1].PID)
		if !strings.Contains(last, `"error"`) {
			t.Fatalf("round %d: the stream ended with %s, want an error", round, last)
		}
		t.Logf("round %d: the stream ended %s after rank 1 was killed with %s", round, took, last)
		if took > time.Second {
			t.Errorf("round %d: the stream ended %s after rank 1 was killed, want under a second", round, took)
		}
		if ps := psModels(t, addr); len(ps) != 1 || ps[0].State != engine.StatePoisoned || ps[0].Error == "" {
			t.Fatalf("round %d: ps after the kill: %+v, want poisoned with the reason", round, ps)
		}
		if got := greedyText(t, addr, model); got != want {
			t.Fatalf("round %d: greedy output after recovery %q, want %q", round, got, want)
		}
	}
	resp := postJSON(t, addr, "/api/load", `{"model":"`+model+`","tp":1}`)
	resp.Body.Close()
	if ps := psModels(t, addr); resp.StatusCode != 200 || len(ps) != 1 || len(ps[0].Ranks) != 0 {
		t.Fatalf("load with tp 1: %d, ps %+v: want the idle model reloaded on one rank", resp.StatusCode, ps)
	}
	if got := greedyText(t, addr, model); got != want {
		t.Fatalf("one rank: %q, two ranks: %q", got, want)
	}
	resp = postJSON(t, addr, "/api/load", `{"model":"`+model+`","tp":3}`)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b := string(raw)
	if resp.StatusCode != 400 || !strings.Contains(b, "allowed sizes") {
		t.Fatalf("load with tp 3: %d %s, want 400 naming the allowed sizes", resp.StatusCode, b)
	}
	if err := stop(); err != nil {
		t.Errorf("stopping the daemon: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d (a rank) outlived the daemon", pid)
		}
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && syscall.Kill(pid, 0) == nil
}
