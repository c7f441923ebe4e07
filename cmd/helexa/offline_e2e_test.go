package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// closedEndpoint is a URL where nothing listens.
func closedEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestCachedModelRunsWithoutNetwork: a model pulled once runs with the Hub
// unreachable, without waiting on it, and a model that is not cached fails
// at once with a clear message instead of a 500 after retries.
func TestCachedModelRunsWithoutNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	bin := buildRunBinary(t)
	data, err := os.ReadFile(fixtures.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	h.AddRepo("tiny/stories-GGUF", map[string][]byte{"stories260K-F32.gguf": data})
	cache := filepath.Join(t.TempDir(), "hf")
	env := func(endpoint string) []string {
		return append(runEnv(t), "HF_HUB_OFFLINE=", "HF_HUB_CACHE="+cache, "HF_ENDPOINT="+endpoint, "HF_HUB_DISABLE_PROGRESS_BARS=1")
	}
	pull := exec.Command(bin, "pull", "tiny/stories-GGUF")
	pull.Env = env(h.URL)
	if out, err := pull.CombinedOutput(); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	offline := closedEndpoint(t)
	run := exec.Command(bin, "run", "tiny/stories-GGUF", "--raw", "--temperature", "0", "-n", "4", "Once upon a time")
	run.Env = env(offline)
	start := time.Now()
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "there was") {
		t.Fatalf("run of a cached model with the Hub unreachable: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the cached model took %s to answer with the Hub unreachable", d)
	}
	missing := exec.Command(bin, "run", "nobody/not-cached-GGUF", "hello")
	missing.Env = env(offline)
	start = time.Now()
	out, err = missing.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in the local cache") {
		t.Fatalf("an uncached model with the Hub unreachable: %v\n%s", err, out)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the uncached model failed after %s, want under a second", d)
	}
}
