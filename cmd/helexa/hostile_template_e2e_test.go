//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
)

// Hostile chat templates, each put into a model directory's
// chat_template.jinja.
var hostileTemplates = []struct {
	name, src string
	want      string // in the one-line failure
}{
	{"range", `{% for i in range(1000000000) %}x{% endfor %}`, "loop iterations 1000000"},
	{"recursion", `{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}`, "call depth 500"},
	{"nesting", "{{ " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000) + " }}", "parse depth 256"},
}

// slowTemplate renders for the whole render-time limit (10 s), writing
// nothing and holding little: a macro that calls itself twice, 2^40 calls
// deep in all, each within the call depth.
const slowTemplate = `{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(40) }}`

// templateModel is the stories260K fixture as a safetensors directory
// whose chat_template.jinja is src.
func templateModel(t *testing.T, src string) string {
	t.Helper()
	return stModel(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunHostileTemplates: `helexa run` on a model whose chat template
// loops a billion times, recurses without end or nests 100 000 brackets
// fails with one line naming the limit, in bounded time and memory; on a
// template that renders slowly it exits promptly on SIGTERM.
func TestRunHostileTemplates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	bin := buildRunBinary(t)
	base := baselineRSS(t, bin)
	for _, h := range hostileTemplates {
		t.Run(h.name, func(t *testing.T) {
			dir := templateModel(t, h.src)
			ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", dir, "--temperature", "0", "-n", "4", "Once upon a time")
			cmd.Env = runEnv(t)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			var ee *exec.ExitError
			if ctx.Err() != nil || !errors.As(err, &ee) {
				t.Fatalf("want a failed run within %v, got %v after %v\n%s", hostileTimeout, err, took, stderr.String())
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss - base // KiB above the baseline
			t.Logf("%v after %v, max RSS %d MiB above `helexa version`: %s", err, took.Round(time.Millisecond), rss>>10, strings.TrimSpace(stderr.String()))
			if lines := failureLines(stderr.String()); len(lines) != 1 || !strings.Contains(lines[0], h.want) {
				t.Fatalf("stderr %q: want one line containing %q", stderr.String(), h.want)
			}
			if took > 10*time.Second || rss > 512<<10 {
				t.Fatalf("took %v and %d MiB above the baseline; want under 10 s and 512 MiB", took, rss>>10)
			}
		})
	}

	t.Run("sigterm while rendering", func(t *testing.T) {
		dir := templateModel(t, slowTemplate)
		cmd := exec.Command(bin, "run", dir, "--temperature", "0", "-n", "4", "Once upon a time")
		cmd.Env = runEnv(t)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// Rendering is the only thing that takes a second of CPU here.
		if err := waitCPU(cmd.Process.Pid, time.Second, 20*time.Second); err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			t.Logf("exited %v after SIGTERM: %v: %s", time.Since(sent).Round(time.Millisecond), err, strings.TrimSpace(stderr.String()))
			if d := time.Since(sent); d > 3*time.Second {
				t.Fatalf("exited %v after SIGTERM; want within 3 s", d)
			}
		case <-time.After(8 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("helexa run kept rendering 8 s after SIGTERM\n%s", stderr.String())
		}
	})
}

// failureLines are the lines of a failed run's stderr, less the notice
// that no daemon answers (runEnv points at none).
func failureLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "no helexa daemon answers at ") {
			out = append(out, l)
		}
	}
	return out
}

// TestServeHostileTemplates: through `helexa serve`, a model with a
// hostile chat template fails its chat requests (or its load) with a 400
// naming the limit while the daemon and another model keep answering; a
// client that gives up on a slow render leaves the daemon idle within a
// few seconds and /api/ps with no request active.
func TestServeHostileTemplates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	good := fixtures.Path(t, "models", "stories260K.gguf")
	addr, pid, logs := startTemplateDaemon(t)
	defer logOnFailure(t, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if code, body := chatRequest(ctx, addr, good); code != http.StatusOK {
		t.Fatalf("stories260K: %d %s", code, body)
	}
	for _, h := range hostileTemplates {
		dir := templateModel(t, h.src)
		start := time.Now()
		code, body := chatRequest(ctx, addr, dir)
		t.Logf("%s: %d after %v: %s", h.name, code, time.Since(start).Round(time.Millisecond), body)
		if code != http.StatusBadRequest || !strings.Contains(body, h.want) {
			t.Errorf("%s: %d %s; want 400 naming %q", h.name, code, body, h.want)
		}
		if code, body := chatRequest(ctx, addr, good); code != http.StatusOK {
			t.Fatalf("stories260K after %s: %d %s", h.name, code, body)
		}
	}

	// A 10 000-property tool schema, which the template walks property by
	// property, stops rendering at the context's byte bound with the
	// context-length refusal.
	walker := templateModel(t, toolWalkTemplate)
	start := time.Now()
	code, body := postChat(ctx, addr, bigToolRequest(walker))
	t.Logf("10 000-property tool: %d after %v: %.200s", code, time.Since(start).Round(time.Millisecond), body)
	if code != http.StatusBadRequest || !strings.Contains(body, "context_length_exceeded") {
		t.Errorf("10 000-property tool: %d %.300s; want a 400 context_length_exceeded", code, body)
	}

	// A client that gives up on a slow render.
	slow := templateModel(t, slowTemplate)
	gaveUp, giveUp := context.WithTimeout(ctx, 2*time.Second)
	code, body = chatRequest(gaveUp, addr, slow)
	giveUp()
	if code != 0 {
		t.Fatalf("the slow template answered %d %s before the client gave up", code, body)
	}
	left := time.Now()
	if err := waitIdle(pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("daemon idle %v after the client left", time.Since(left).Round(time.Millisecond))
	c, err := api.NewClient(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.PS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ps {
		if st.Active != 0 {
			t.Errorf("/api/ps: %s has %d requests active after its client left", st.Name, st.Active)
		}
	}
	if code, body := chatRequest(ctx, addr, good); code != http.StatusOK {
		t.Fatalf("stories260K at the end: %d %s", code, body)
	}
}

// startTemplateDaemon starts `helexa serve` on a free port in a private
// state directory and returns its address and pid; it is stopped with
// SIGTERM when the test ends.
func startTemplateDaemon(t *testing.T) (string, int, *syncBuffer) {
	t.Helper()
	bin := buildRunBinary(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--host", addr, "--shutdown-timeout", "5s")
	cmd.Env = append(os.Environ(), "HF_HUB_CACHE="+filepath.Join(dir, "hf"), "HF_HUB_OFFLINE=1",
		"HELEXA_STATE_DIR="+filepath.Join(dir, "state"), "HELEXA_API_KEY=", "HELEXA_HOST=")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("helexa serve did not exit within 15 s of SIGTERM")
		}
	})
	c, err := api.NewClient(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := waitHealthy(ctx, c, exited, 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	return addr, cmd.Process.Pid, logs
}

// toolWalkTemplate renders each tool's parameters one property at a time,
// as many published templates do.
const toolWalkTemplate = `{% for t in tools %}{% for k, v in t.function.parameters.properties.items() %}` +
	`{{ k }}: {{ v | tojson }}{% if v.description %} ({{ v.description | trim }}){% endif %}
{% endfor %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}`

// bigToolRequest is a chat request to model with one tool whose schema has
// 10 000 properties (about 400 KB).
func bigToolRequest(model string) map[string]any {
	props := map[string]any{}
	for i := range 10_000 {
		props[fmt.Sprintf("property_%05d", i)] = map[string]any{"type": "string", "description": "a property of the hostile schema, number " + strconv.Itoa(i)}
	}
	return map[string]any{"model": model, "max_tokens": 4, "temperature": 0,
		"messages": []map[string]string{{"role": "user", "content": "Once upon a time"}},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "wide", "parameters": map[string]any{"type": "object", "properties": props}}}}}
}

// chatRequest posts a one-message chat completion and returns the status
// and body, or 0 and the error when the request itself failed (ctx ended).
func chatRequest(ctx context.Context, addr, model string) (int, string) {
	return postChat(ctx, addr, map[string]any{"model": model, "max_tokens": 4, "temperature": 0,
		"messages": []map[string]string{{"role": "user", "content": "Once upon a time"}}})
}

// postChat posts doc to /v1/chat/completions and returns the status and
// body, or 0 and the error when the request itself failed (ctx ended).
func postChat(ctx context.Context, addr string, doc any) (int, string) {
	body, _ := json.Marshal(doc)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(out))
}

// cpuTime is the user and system CPU time process pid has used.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which ends with the last ')':
	// utime and stime are the 12th and 13th of them, in clock ticks.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil // USER_HZ is 100 on Linux
}

// waitCPU waits until process pid has used at least used of CPU time.
func waitCPU(pid int, used, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		cpu, err := cpuTime(pid)
		if err != nil {
			return err
		}
		if cpu >= used {
			return nil
		}
	}
	return fmt.Errorf("process %d did not use %v of CPU within %v", pid, used, limit)
}

// waitIdle waits until process pid uses under a tenth of a CPU over half a
// second, failing after limit.
func waitIdle(pid int, limit time.Duration) error {
	const window = 500 * time.Millisecond
	var last time.Duration
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		before, err := cpuTime(pid)
		if err != nil {
			return err
		}
		time.Sleep(window)
		after, err := cpuTime(pid)
		if err != nil {
			return err
		}
		if last = after - before; last < window/10 {
			return nil
		}
	}
	return fmt.Errorf("daemon still used %v of CPU in %v, %v after its client left", last, window, limit)
}

// baselineRSS is the peak RSS (KiB) Linux reports for a trivial run of
// bin (`helexa version`) started from this test process: a child's
// ru_maxrss starts from the parent's resident size at the fork (Go starts
// children with vfork, and exec keeps the old memory's high-water mark),
// so a hostile run's own cost is what it reports above this.
func baselineRSS(t *testing.T, bin string) int64 {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = runEnv(t)
	if err := cmd.Run(); err != nil {
		t.Fatalf("helexa version: %v", err)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}
