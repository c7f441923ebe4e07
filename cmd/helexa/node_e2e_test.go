package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

// TestOpenAINodeSDK runs the OpenAI Node SDK (6.49, installed into
// testdata/node by `make test`) against the real daemon: content parts,
// ignored fields, tool_choice required and named, streaming, prompt
// arrays and embeddings (which the SDK asks for as base64).
func TestOpenAINodeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := filepath.Join("..", "..", "testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the OpenAI Node SDK is not installed in %s: run `make node-deps` (make test does): %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (Node.js 18 or newer runs the SDK test): %v", err)
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, _, logs := startDaemon(t, "")
	cmd := exec.Command(node, "compat.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_E2E_BASE_URL=http://"+addr+"/v1", "NODE_E2E_MODEL="+model)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("OpenAI Node SDK checks: %v\n%s\ndaemon log:\n%s", err, out, logs.String())
	}
	t.Logf("%s", out)
}
