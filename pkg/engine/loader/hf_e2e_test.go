package loader

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/safetensors/sttest"
)

// TestRunSafetensorsDirEndToEnd builds the helexa binary and checks that
// `helexa run DIR --raw --temperature 0 -n 8 PROMPT` on the Hugging Face
// form of llama-q prints exactly what the same command prints for the GGUF.
func TestRunSafetensorsDirEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helexa binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "helexa")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/helexa/helexa/cmd/helexa").CombinedOutput(); err != nil {
		t.Fatalf("building helexa: %v\n%s", err, out)
	}
	gguf := fixtures.Path(t, "models", "llama-q-F32.gguf")
	dir := filepath.Join(tmp, "llama-q-hf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sttest.Convert(gguf, dir, sttest.Options{}); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"HELEXA_HOST=127.0.0.1:1", // nothing listens there: load in-process
		"HELEXA_STATE_DIR="+filepath.Join(tmp, "state"),
		"HF_HUB_CACHE="+filepath.Join(tmp, "hf"), "HF_HUB_OFFLINE=1", "HELEXA_LOG_LEVEL=")
	run := func(model string) string {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, "run", model, "--raw", "--temperature", "0", "-n", "8", "Once upon a time")
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("helexa run %s: %v\n%s", model, err, stderr.String())
		}
		return stdout.String()
	}
	want, got := run(gguf), run(dir)
	if want == "" || got != want {
		t.Errorf("directory printed %q, GGUF %q", got, want)
	}
	t.Logf("both printed %q", got)
}
