package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/hub/hubtest"
)

// TestOllamaNodeClient runs the ollama JavaScript client (0.6.4, installed
// into testdata/node by `make test`) against the real daemon: version,
// pull from a test Hub, list, chat by an alias (streamed and not),
// generate, embed, show, ps, a refused image, delete. The model replays a
// fixed text (HELEXA_TEST_REPLAY), so the script checks what the client
// hands its user: message.content, done_reason, eval_count, names, details.
func TestOllamaNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := filepath.Join("..", "..", "testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ollama", "package.json")); err != nil {
		t.Fatalf("the ollama client is not installed in %s: run `make node-deps` (make test does): %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (Node.js 18 or newer runs the client test): %v", err)
	}
	weights, err := os.ReadFile(fixtures.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	const ref, alias, text = "org/stories-GGUF:Q8_0", "stories:260k", "Once upon a time there was a cat."
	h := hubtest.New(t)
	h.AddRepo("org/stories-GGUF", map[string][]byte{"stories-Q8_0.gguf": weights, "README.md": []byte("card")})
	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "config.json")
	script := filepath.Join(tmp, "script.txt")
	if err := os.WriteFile(cfg, []byte(`{"aliases":{"`+alias+`":"`+ref+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, logs := startDaemon(t, "", "HF_ENDPOINT="+h.URL, "HF_HUB_OFFLINE=", "HF_TOKEN=",
		"HF_HUB_CACHE="+filepath.Join(tmp, "hub"), "HELEXA_CONFIG="+cfg, envvars.TestReplay.Name+"="+script)
	runOllamaScript(t, node, dir, logs, "NODE_E2E_MODE=api", "NODE_E2E_HOST=http://"+addr, "NODE_E2E_REF="+ref,
		"NODE_E2E_ALIAS="+alias, "NODE_E2E_TEXT="+text)
}

// TestOllamaNodeClientTools runs the ollama JavaScript client's tool calls
// and thinking against a fixture Qwen3 model with Qwen3's chat template,
// replaying reasoning and a get_weather call.
func TestOllamaNodeClientTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	dir := filepath.Join("..", "..", "testdata", "node")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (Node.js 18 or newer runs the client test): %v", err)
	}
	model := fixtures.Path(t, "models", "qwen3-tiny-Q8_0.gguf")
	tmpl, err := filepath.Abs(corpusTemplate("Qwen-Qwen3-0.6B.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.txt")
	answer := "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	if err := os.WriteFile(script, []byte(answer), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, logs := startDaemon(t, "", envvars.ChatTemplate.Name+"="+tmpl, envvars.TestReplay.Name+"="+script)
	runOllamaScript(t, node, dir, logs, "NODE_E2E_MODE=tools", "NODE_E2E_HOST=http://"+addr, "NODE_E2E_REF="+model)
}

// runOllamaScript runs testdata/node/ollama.mjs with env, failing the test
// with its output and the daemon's log when a check fails.
func runOllamaScript(t *testing.T, node, dir string, logs *syncBuffer, env ...string) {
	t.Helper()
	cmd := exec.Command(node, "ollama.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ollama client checks: %v\n%s\ndaemon log:\n%s", err, out, logs.String())
	}
	t.Logf("%s", out)
}
