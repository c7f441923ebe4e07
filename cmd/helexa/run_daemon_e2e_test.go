package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestRunThroughDaemonShowsPull: `helexa run` of a Hub model through a
// daemon shows the daemon's download progress, and a one-shot answer cut
// off by a full context says so on stderr.
func TestRunThroughDaemonShowsPull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	data, err := os.ReadFile(fixtures.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	h.AddRepo("tiny/stories-GGUF", map[string][]byte{"stories260K-F32.gguf": data})
	addr, _, logs := startDaemon(t, "", "HF_ENDPOINT="+h.URL, "HF_HUB_OFFLINE=")
	defer logOnFailure(t, logs)
	bin := buildRunBinary(t)
	run := exec.Command(bin, "run", "tiny/stories-GGUF", "--raw", "--temperature", "0", "-n", "4", "Once upon a time")
	run.Env = append(os.Environ(), "HELEXA_HOST="+addr, "HF_HUB_DISABLE_PROGRESS_BARS=1")
	var stdout, stderr strings.Builder
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("run through the daemon: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stories260K-F32.gguf") || stdout.Len() == 0 {
		t.Errorf("run through the daemon: stderr %q stdout %q; want the daemon's download of stories260K-F32.gguf shown", stderr.String(), stdout.String())
	}
	full := exec.Command(bin, "run", fixtures.Path(t, "models", "stories260K.gguf"), "--raw", "--num-ctx", "12", "Once upon a time")
	full.Env = runEnv(t)
	out, err := full.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "context is full") {
		t.Errorf("an answer cut off by the context: %v\n%s", err, out)
	}
}
