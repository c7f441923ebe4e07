package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
)

// TestOpenAINodeSDKResponses runs the OpenAI Node SDK's Responses API
// (testdata/node/responses.mjs) against the real daemon, whose model
// writes a scripted answer in the Mistral format (reasoning, text and a
// get_weather call): streamed and not, the SDK's stream helper, a
// function-call round trip, previous_response_id, retrieve and delete,
// store: false and the refusals.
func TestOpenAINodeSDKResponses(t *testing.T) {
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
	script := filepath.Join(t.TempDir(), "script.txt")
	answer := `[THINK]The user wants the weather.[/THINK]Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`
	if err := os.WriteFile(script, []byte(answer), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl, err := filepath.Abs(corpusTemplate("mistralai-Ministral-3-14B-Reasoning-2512.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	addr, _, logs := startDaemon(t, "", envvars.ChatTemplate.Name+"="+tmpl, envvars.TestReplay.Name+"="+script)
	cmd := exec.Command(node, "responses.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_E2E_BASE_URL=http://"+addr+"/v1", "NODE_E2E_MODEL="+model)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("OpenAI Node SDK Responses checks: %v\n%s\ndaemon log:\n%s", err, out, logs.String())
	}
	t.Logf("%s", out)
}
