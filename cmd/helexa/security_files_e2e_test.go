//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestPullRefusesSymlinkedPartial: `helexa pull` with a symlinked
// *.incomplete in the cache (pointing at a file outside it) fails with a
// clear error and leaves the link's target unchanged.
func TestPullRefusesSymlinkedPartial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	bin := buildRunBinary(t)
	h := hubtest.New(t)
	data := make([]byte, 200_000)
	_, _ = rand.Read(data)
	h.AddRepo("org/m-GGUF", map[string][]byte{"m-Q4_0.gguf": data})
	cache := t.TempDir()
	blobs := filepath.Join(cache, "models--org--m-GGUF", "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim.txt")
	original := []byte("a file outside the cache\n")
	if err := os.WriteFile(victim, original, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(blobs, hubtest.SHA256(data)+".incomplete")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "pull", "org/m-GGUF")
	cmd.Env = append(os.Environ(), "HF_HUB_CACHE="+cache, "HF_ENDPOINT="+h.URL, "HF_HUB_OFFLINE=", "HF_HUB_DISABLE_PROGRESS_BARS=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a regular file (it is a symbolic link") {
		t.Fatalf("pull through a symlinked partial: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(victim); !bytes.Equal(got, original) {
		t.Fatalf("the link's target was written: %q", got)
	}
}

// TestFIFOModelFailsAtOnce: loading a FIFO named *.gguf fails at once with
// a clear error (no read that blocks forever), and a real model still
// loads while a request for the FIFO is being refused.
func TestFIFOModelFailsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	fifo := filepath.Join(t.TempDir(), "trap.gguf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	addr, _, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	json := map[string]string{"Content-Type": "application/json"}
	done := make(chan string, 1)
	go func() {
		st, b := rawRequest(t, addr, "POST", "/api/load", fmt.Sprintf(`{"model":%q}`, fifo), json)
		done <- fmt.Sprint(st, " ", b)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "400") || !strings.Contains(got, "not a regular file (it is a named pipe (FIFO))") {
			t.Fatalf("loading a FIFO: %s, want a 400 saying it is not a regular file", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("loading a FIFO did not fail within 5s")
	}
	if st, b := rawRequest(t, addr, "POST", "/api/load", fmt.Sprintf(`{"model":%q}`, model), json); st != 200 {
		t.Fatalf("loading a real model after the FIFO: %d %s", st, b)
	}
}
