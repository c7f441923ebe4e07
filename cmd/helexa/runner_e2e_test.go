package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
)

// e2eHTTP talks to the daemon without keep-alive, so the daemon's open
// descriptors do not depend on idle client connections.
var e2eHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}

func postJSON(t *testing.T, addr, path, body string) *http.Response {
	t.Helper()
	resp, err := e2eHTTP.Post("http://"+addr+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func psModels(t *testing.T, addr string) []engine.ModelStatus {
	t.Helper()
	resp, err := e2eHTTP.Get("http://" + addr + "/api/ps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Models []engine.ModelStatus }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Models
}

func greedyText(t *testing.T, addr, model string) string {
	t.Helper()
	resp := postJSON(t, addr, "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":"Once upon a time","max_tokens":24,"temperature":0}`, model))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("greedy completion: %d %s", resp.StatusCode, b)
	}
	var out struct{ Choices []struct{ Text string } }
	if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("greedy completion reply %s: %v", b, err)
	}
	return out.Choices[0].Text
}

// ppidOf reads a process's parent pid from /proc.
func ppidOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// childrenOf lists the processes (zombies included) whose parent is pid.
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var kids []string
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if p, _ := strconv.Atoi(f[1]); p == pid {
			kids = append(kids, fmt.Sprintf("%d(%s)", n, f[0]))
		}
	}
	return kids
}

func fdCount(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// settledFDs counts pid's descriptors, giving connections that just ended
// a moment to close when the count is above want (a leak stays).
func settledFDs(t *testing.T, pid, want int) int {
	n := fdCount(t, pid)
	for deadline := time.Now().Add(2 * time.Second); n > want && time.Now().Before(deadline); n = fdCount(t, pid) {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// streamUntilKilled starts a long sampled stream, SIGKILLs the model's
// runner after the first token, and returns the stream's last event and
// how long after the kill the stream ended.
func streamUntilKilled(t *testing.T, addr, model string, runnerPID int) (string, time.Duration) {
	t.Helper()
	resp := postJSON(t, addr, "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":"Once upon a time","max_tokens":1900,"temperature":0.9,"seed":7,"stream":true}`, model))
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	var killed time.Time
	last := ""
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		last = line
		if killed.IsZero() {
			if err := syscall.Kill(runnerPID, syscall.SIGKILL); err != nil {
				t.Fatalf("killing runner %d: %v", runnerPID, err)
			}
			killed = time.Now()
		}
	}
	return last, time.Since(killed)
}

// TestRunnerKilledMidStream: SIGKILL of a model's runner process ends the
// stream with an error within a second, /api/ps shows the model poisoned,
// and the next request reloads it with the same greedy output; 20 times,
// with no processes or descriptors left behind.
func TestRunnerKilledMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, stop, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	want := greedyText(t, addr, model)
	ps := psModels(t, addr)
	if len(ps) != 1 || ps[0].RunnerPID == 0 || ps[0].State != engine.StateReady {
		t.Fatalf("ps after the first request: %+v, want one ready model with a runner pid", ps)
	}
	daemon := ppidOf(t, ps[0].RunnerPID)
	fds := 0
	for i := range 20 {
		pid := psModels(t, addr)[0].RunnerPID
		last, took := streamUntilKilled(t, addr, model, pid)
		if !strings.Contains(last, `"error"`) || !strings.Contains(last, "poisoned") {
			t.Fatalf("round %d: the stream ended with %s, want a poisoned error", i, last)
		}
		if took > time.Second {
			t.Errorf("round %d: the stream ended %s after the kill, want under a second", i, took)
		}
		ps := psModels(t, addr)
		if len(ps) != 1 || ps[0].State != engine.StatePoisoned || ps[0].Error == "" {
			t.Fatalf("round %d: ps after the kill: %+v, want poisoned with the reason", i, ps)
		}
		if got := greedyText(t, addr, model); got != want {
			t.Fatalf("round %d: greedy output after recovery %q, want %q", i, got, want)
		}
		if ps := psModels(t, addr); ps[0].RunnerPID == pid || ps[0].State != engine.StateReady {
			t.Fatalf("round %d: ps after recovery %+v, want a new runner", i, ps[0])
		}
		if kids := childrenOf(t, daemon); len(kids) != 1 {
			t.Fatalf("round %d: daemon children %v, want exactly the one live runner", i, kids)
		}
		if i == 1 {
			fds = fdCount(t, daemon)
		} else if n := settledFDs(t, daemon, fds); i > 1 && n > fds {
			t.Errorf("round %d: daemon has %d open descriptors, %d after round 1", i, n, fds)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("stopping the daemon: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil && len(childrenOf(t, daemon)) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if kids := childrenOf(t, daemon); len(kids) > 0 {
		t.Errorf("processes left after the daemon stopped: %v", kids)
	}
}
