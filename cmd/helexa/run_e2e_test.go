package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/helexa/helexa/internal/fixtures"
)

// buildRunBinary builds bin/helexa into a temporary directory.
func buildRunBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin", "helexa")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building helexa: %v\n%s", err, out)
	}
	return bin
}

// runEnv is an environment with no daemon and private state/cache dirs.
func runEnv(t *testing.T) []string {
	dir := t.TempDir()
	return append(os.Environ(),
		"HELEXA_HOST=127.0.0.1:1", // nothing listens there: load in-process
		"HELEXA_STATE_DIR="+filepath.Join(dir, "state"),
		"HF_HUB_CACHE="+filepath.Join(dir, "hf"), "HF_HUB_OFFLINE=1",
		"HELEXA_LOG_LEVEL=", "TERM=xterm-256color")
}

// TestRunOneShotMatchesLlamaCpp runs `helexa run MODEL --raw --temperature 0
// -n 16 PROMPT` and compares stdout with llama.cpp's greedy tokens, decoded.
func TestRunOneShotMatchesLlamaCpp(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	var ref struct {
		Cases []struct {
			Name   string `json:"name"`
			Prompt string `json:"prompt"`
			Greedy []struct {
				Token int32 `json:"token"`
			} `json:"greedy"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(fixtures.Path(t, "reference", "stories260K.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var prompt string
	var ids []int32
	for _, c := range ref.Cases {
		if c.Name == "short" {
			prompt = c.Prompt
			for _, g := range c.Greedy[:16] {
				ids = append(ids, g.Token)
			}
		}
	}
	if len(ids) != 16 {
		t.Fatal(`reference case "short" with 16 greedy tokens not found`)
	}
	_, tok := openTokenizer(t, model)
	want := tok.Decode(ids)

	bin := buildRunBinary(t)
	cmd := exec.Command(bin, "run", model, "--raw", "--temperature", "0", "-n", "16", prompt)
	cmd.Env = runEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helexa run: %v\nstderr:\n%s", err, stderr.String())
	}
	got := strings.TrimSuffix(stdout.String(), "\n")
	if got != want {
		t.Errorf("helexa run printed %q; llama.cpp's greedy tokens decode to %q", got, want)
	}
	if strings.Contains(stdout.String(), "\x1b") {
		t.Errorf("stdout is not a terminal but holds ANSI codes: %q", stdout.String())
	}
}

// TestRunChatInPTY runs the chat UI of the real binary in a
// pseudo-terminal, sends a prompt and reads the answer off the screen.
func TestRunChatInPTY(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	bin := buildRunBinary(t)

	// The same greedy answer, one-shot, is what the screen must show.
	one := exec.Command(bin, "run", model, "--temperature", "0", "-n", "12", "Once upon a time")
	one.Env = runEnv(t)
	answer, err := one.Output()
	if err != nil {
		t.Fatalf("one-shot run: %v", err)
	}
	words := strings.Fields(string(answer))
	if len(words) < 3 {
		t.Fatalf("one-shot answer too short to look for: %q", answer)
	}
	needle := strings.Join(words[len(words)-3:], " ")

	cmd := exec.Command(bin, "run", model, "--temperature", "0", "-n", "12")
	cmd.Env = runEnv(t)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	screen := newVTScreen(100, 30)
	go func() { _, _ = io.Copy(screen, ptmx) }()

	waitScreen(t, screen, "Chatting with", "/help")
	if _, err := ptmx.Write([]byte("Once upon a time\r")); err != nil {
		t.Fatal(err)
	}
	scr := waitScreen(t, screen, "› Once upon a time", needle, "12 tokens", "tok/s", "ctx ")
	if !strings.Contains(scr, "/2048") {
		t.Errorf("status line lacks the context size 2048:\n%s", scr)
	}
	// Ctrl+C (a key in the UI's raw mode, not a signal) stops a long
	// answer and leaves the chat running.
	if _, err := ptmx.Write([]byte("/set num_predict 0\rTell me more\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, screen, "› Tell me more", "generating")
	if _, err := ptmx.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, screen, "[stopped]")
	select {
	case err := <-exited:
		t.Fatalf("Ctrl+C during an answer ended helexa run (%v); screen:\n%s", err, screen.String())
	default:
	}
	if _, err := ptmx.Write([]byte("/bye\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("helexa run exited with %v; screen:\n%s", err, screen.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("/bye did not quit; screen:\n%s", screen.String())
	}
	// The conversation stays in the terminal after the chat UI's
	// alternate screen is gone.
	// The UI's last frame shows the same texts, so wait until the reader
	// has taken the final bytes: the conversation without the UI.
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr = waitScreen(t, screen, "› Once upon a time", needle, "› Tell me more", "[stopped]")
		if !strings.Contains(scr, "Chatting with") && !strings.Contains(scr, "/help") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after exit the terminal shows the UI rather than the conversation:\n%s", scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitScreen waits until the screen shows every text, and returns it.
func waitScreen(t *testing.T, s *vtScreen, texts ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.String()
		ok := true
		for _, x := range texts {
			ok = ok && strings.Contains(scr, x)
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", texts, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
