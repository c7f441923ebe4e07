package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
)

// anthropicScript is what the model writes in the Anthropic SDK test:
// reasoning, text and one tool call in Qwen3's format.
const anthropicScript = "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n" +
	"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"

// TestAnthropicNodeSDK runs the Anthropic TypeScript SDK (1.10, installed
// into testdata/node by `make test`) against the real daemon, whose Qwen3
// fixture model writes a scripted answer (HELEXA_TEST_REPLAY): messages
// streamed and not (thinking, text and tool_use blocks, stop reasons,
// usage with cache reads), a tool round trip, count_tokens, and errors as
// the SDK's typed errors; the API key travels as x-api-key.
func TestAnthropicNodeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := filepath.Join("..", "..", "testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json")); err != nil {
		t.Fatalf("the Anthropic SDK is not installed in %s: run `make node-deps` (make test does): %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (Node.js 18 or newer runs the SDK test): %v", err)
	}
	model := fixtures.Path(t, "models", "qwen3-tiny-Q8_0.gguf")
	script := filepath.Join(t.TempDir(), "script.txt")
	if err := os.WriteFile(script, []byte(anthropicScript), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "e2e-anthropic"
	addr, _, logs := startDaemon(t, key, envvars.TestReplay.Name+"="+script)
	cmd := exec.Command(node, "anthropic.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_E2E_BASE_URL=http://"+addr, "NODE_E2E_MODEL="+model, "NODE_E2E_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Anthropic SDK checks: %v\n%s\ndaemon log:\n%s", err, out, logs.String())
	}
	t.Logf("%s", out)
}
