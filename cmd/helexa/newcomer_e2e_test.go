package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
)

// TestNewcomerFirstTenMinutes plays a newcomer's first session with the
// real binary: the README's first run command, a chat in a terminal
// (tmux) with the keys the README and the chat's help promise, and a
// detached daemon that ps, run and stop find with no HELEXA_HOST.
func TestNewcomerFirstTenMinutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: the chat is driven in a tmux pane (.ci/run installs it)")
	}
	bin := envvars.TestBin.Get()
	if bin == "" {
		bin = buildRunBinary(t)
	}
	models := filepath.Dir(fixtures.Path(t, "models", "stories260K.gguf"))
	home := t.TempDir()
	env := newcomerEnv(home)

	t.Run("README first command", func(t *testing.T) { readmeFirstRun(t, bin, append(env, "HELEXA_HOST=127.0.0.1:1")) })
	t.Run("chat in a terminal", func(t *testing.T) { chatInTmux(t, tmux, bin, models, append(env, "HELEXA_HOST=127.0.0.1:1")) })
	t.Run("detached daemon", func(t *testing.T) { detachedDaemon(t, bin, models, env) })
}

// newcomerEnv is this process's environment (TestMain already cleared the
// HELEXA_* and HF_* settings) with a fresh home, so config, state (the
// daemon's pid file) and cache are the test's own, and no network.
func newcomerEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || strings.HasPrefix(name, "XDG_") || name == "TMUX" || name == "TERM" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "HF_HUB_OFFLINE=1", "TERM=xterm-256color")
}

// readmeFirstRun runs the README's first command (with the built binary
// for bin/helexa) from the repository root, as the README says.
func readmeFirstRun(t *testing.T, bin string, env []string) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^make build && bin/helexa (run .*)$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("README.md has no `make build && bin/helexa run …` line")
	}
	args := shellWords(t, m[1])
	for i, a := range args {
		if d := envvars.Fixtures.Get(); d != "" && strings.HasPrefix(a, "../shared/fixtures/") {
			args[i] = filepath.Join(d, strings.TrimPrefix(a, "../shared/fixtures/"))
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bin/helexa %s: %v\nstderr: %s", m[1], err, stderr.String())
	}
	if n := len(strings.Fields(string(out))); n < 3 || n > 64 {
		t.Errorf("bin/helexa %s printed %d words, want a short answer:\n%s", m[1], n, out)
	}
	if strings.Contains(stderr.String(), "Error") {
		t.Errorf("stderr shows an error:\n%s", stderr.String())
	}
}

// shellWords splits a command line with double-quoted words.
func shellWords(t *testing.T, s string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`"([^"]*)"|(\S+)`).FindAllStringSubmatch(s, -1) {
		if m[2] != "" {
			words = append(words, m[2])
		} else {
			words = append(words, m[1])
		}
	}
	if len(words) == 0 {
		t.Fatalf("no words in %q", s)
	}
	return words
}

// tmuxPane drives one tmux session on a private server.
type tmuxPane struct {
	t          *testing.T
	tmux, sock string
}

func (p tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types keys into the pane (tmux key names such as C-c and Enter,
// or literal text with -l).
func (p tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.run(append([]string{"send-keys", "-t", "chat"}, keys...)...)
}

// screen is what the pane shows now; history adds the scrollback.
func (p tmuxPane) screen() string { p.t.Helper(); return p.run("capture-pane", "-p", "-t", "chat") }
func (p tmuxPane) history() string {
	p.t.Helper()
	return p.run("capture-pane", "-p", "-S", "-", "-t", "chat")
}

// wait polls until ok(screen) holds, or fails with what is on screen.
func (p tmuxPane) wait(what string, ok func(string) bool) string {
	p.t.Helper()
	return p.waitFor(20*time.Second, what, ok)
}

func (p tmuxPane) waitFor(limit time.Duration, what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s; the pane shows:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func containsAll(texts ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	}
}

// chatInTmux: `helexa run stories260K.gguf` in a terminal. Ctrl+C clears
// a draft and does not quit; on an empty input it arms quitting; a message
// gets an answer; /bye quits with status 0 and leaves the conversation in
// the scrollback.
func chatInTmux(t *testing.T, tmux, bin, models string, env []string) {
	p := tmuxPane{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	var shell strings.Builder
	shell.WriteString("cd " + shellQuote(models) + " && env")
	for _, kv := range env {
		shell.WriteString(" " + shellQuote(kv))
	}
	shell.WriteString(" " + shellQuote(bin) + " run stories260K.gguf; echo \"helexa exited: $?\"; sleep 600")
	p.run("-f", "/dev/null", "new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", shell.String())
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", p.sock, "kill-server").Run() })

	p.wait("the chat UI", containsAll("Chatting with", "/help"))
	p.keys("-l", "a draft I regret")
	p.wait("the draft", containsAll("a draft I regret"))
	p.keys("C-c")
	p.wait("Ctrl+C to clear the draft", func(s string) bool { return !strings.Contains(s, "a draft I regret") })
	if s := p.screen(); strings.Contains(s, "helexa exited") || strings.Contains(s, "Ctrl+C again") {
		t.Fatalf("Ctrl+C on a draft did more than clear it:\n%s", s)
	}
	p.keys("C-c")
	p.wait("Ctrl+C on an empty input to arm quitting", containsAll("Ctrl+C again"))
	// Unbounded, the tiny model writes until its 2048-token context is
	// full; 48 tokens keep the test short.
	p.keys("-l", "/set num_predict 48")
	p.keys("Enter")
	p.keys("-l", "Once upon a time")
	p.keys("Enter")
	done := regexp.MustCompile(`\d+ tokens · [0-9.]+ tok/s`) // the line that ends an answer
	p.waitFor(30*time.Second, "an answer", func(s string) bool { return done.MatchString(s) && !strings.Contains(s, "generating") })
	if strings.Contains(p.screen(), "helexa exited") {
		t.Fatalf("the chat quit:\n%s", p.screen())
	}
	p.keys("-l", "/bye")
	p.keys("Enter")
	p.wait("/bye to quit", containsAll("helexa exited: 0"))
	hist := p.history()
	for _, want := range []string{"› Once upon a time"} {
		if !strings.Contains(hist, want) {
			t.Errorf("the scrollback lacks %q after the chat:\n%s", want, hist)
		}
	}
	i := strings.LastIndex(hist, "› Once upon a time")
	j := strings.LastIndex(hist, "helexa exited")
	if i < 0 || j < i || len(strings.Fields(hist[i+len("› Once upon a time"):j])) < 3 {
		t.Errorf("the scrollback lacks the answer after the message:\n%s", hist)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// detachedDaemon: `serve --detach --host ADDR`, then ps, run and stop by
// the model's short name with no HELEXA_HOST (the pid file says where).
func detachedDaemon(t *testing.T, bin, models string, env []string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	helexa := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = models, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := helexa("serve", "--detach", "--host", addr); err != nil {
		t.Fatalf("serve --detach: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := helexa("serve", "--stop"); err != nil {
			t.Errorf("serve --stop: %v\n%s", err, out)
		}
	})
	if out, err := helexa("ps"); err != nil || !strings.Contains(out, "NAME") {
		t.Fatalf("ps: %v\n%s", err, out)
	}
	out, err := helexa("run", "stories260K.gguf", "-n", "8", "Once upon a time")
	if err != nil || len(strings.Fields(out)) == 0 || strings.Contains(out, "loading the model in this process") {
		t.Fatalf("run through the daemon: %v\n%s", err, out)
	}
	if out, err := helexa("ps"); err != nil || !strings.Contains(out, "stories260K.gguf") {
		t.Fatalf("ps after run: %v\n%s", err, out)
	}
	if out, err := helexa("stop", "stories260K.gguf"); err != nil {
		t.Fatalf("stop stories260K.gguf: %v\n%s", err, out)
	}
	if out, err := helexa("ps"); err != nil || strings.Contains(out, "stories260K.gguf") {
		t.Errorf("ps after stop still lists the model: %v\n%s", err, out)
	}
}
