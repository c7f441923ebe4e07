package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor/replay"
)

// The real coding agents (Claude Code and Codex CLI, pinned by
// testdata/agents/package-lock.json and installed by `make agent-deps`)
// drive the real daemon through a one-tool round trip: the Qwen3 fixture
// model's first scripted answer calls the agent's shell tool, which writes
// a file into a temporary workspace; its second answer is the final text
// the agent prints. The agents' own requests (long system prompts, dozens
// of tools with large schemas, cache_control, metadata) go through as sent.

// agentFile and agentFinal are what the scripted tool writes and what the
// model finally says.
const (
	agentFile  = "agent-made.txt"
	agentFinal = "Done: agent-made.txt says hi."
)

// agentScript is the replay file: a tool call of the agent's shell tool
// (name and arguments in its schema) and then the final text.
func agentScript(tool, args string) string {
	return "<tool_call>\n{\"name\": \"" + tool + "\", \"arguments\": " + args + "}\n</tool_call>\n" +
		replay.Separator + "\n" + agentFinal
}

// agentBin is an agent's executable in testdata/agents, or a skip (a
// failure under HELEXA_TEST_ALL=1) when the agents are not installed.
func agentBin(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the helexa binary and a real agent")
	}
	bin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := name + " is not installed in testdata/agents: run `make agent-deps` (make test-all does; it needs the npm registry)"
		if testAll {
			t.Fatalf("%s: %v", msg, err)
		}
		t.Skip(msg)
	}
	return bin
}

// agentRun is one agent run against a daemon that replays script.
type agentRun struct {
	workspace string // the agent's working directory
	home      string // its HOME (config and state stay in the test)
	addr, key string // the daemon
	model     string
	logs      *syncBuffer
}

// startAgentDaemon starts a daemon whose models write script, with a
// context large enough for an agent's prompt.
func startAgentDaemon(t *testing.T, script string) agentRun {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.txt")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	r := agentRun{workspace: t.TempDir(), home: t.TempDir(), key: "e2e-agents",
		model: fixtures.Path(t, "models", "qwen3-tiny-Q8_0.gguf")}
	r.addr, _, r.logs = startDaemon(t, r.key, envvars.TestReplay.Name+"="+path, envvars.NumCtx.Name+"=32768")
	return r
}

// run runs the agent with env (besides PATH and HOME) and returns what
// it printed on stdout.
func (r agentRun) run(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.workspace
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\ndaemon log:\n%s", filepath.Base(bin), err, stdout.String(), stderr.String(), r.logs.String())
	}
	t.Logf("%s stderr:\n%s", filepath.Base(bin), stderr.String())
	return stdout.String()
}

// check asserts the round trip: the tool wrote the file, the daemon
// answered two generations (a tool call, then the final text) and the
// agent printed the final text.
func (r agentRun) check(t *testing.T, stdout string) {
	t.Helper()
	if got := strings.TrimSpace(stdout); !strings.HasSuffix(got, agentFinal) {
		t.Errorf("the agent printed %q, want it to end with %q", got, agentFinal)
	}
	data, err := os.ReadFile(filepath.Join(r.workspace, agentFile))
	if err != nil || string(data) != "hi\n" {
		t.Errorf("the tool did not write %s: %q, %v", agentFile, data, err)
	}
	var statuses []string
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(line, `msg="request finished"`) {
			_, rest, _ := strings.Cut(line, " status=")
			status, _, _ := strings.Cut(rest, " ")
			statuses = append(statuses, status)
		}
	}
	if strings.Join(statuses, ",") != "tool_calls,stop" {
		t.Errorf("generations ended %v, want [tool_calls stop] (the call, then the answer to its result)", statuses)
	}
	if t.Failed() {
		t.Logf("daemon log:\n%s", r.logs.String())
	}
}

// TestClaudeCode runs `claude -p` with ANTHROPIC_BASE_URL at the daemon:
// its Bash tool runs the scripted command and the final text is printed.
// Its non-essential traffic (telemetry, update checks) is switched off by
// its documented variables, so it talks to nothing but the daemon.
func TestClaudeCode(t *testing.T) {
	bin := agentBin(t, "claude")
	r := startAgentDaemon(t, agentScript("Bash", `{"command": "echo hi > `+agentFile+`", "description": "Write the file"}`))
	out := r.run(t, bin, []string{
		"ANTHROPIC_BASE_URL=http://" + r.addr, "ANTHROPIC_API_KEY=" + r.key, "ANTHROPIC_MODEL=" + r.model,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, "-p", "Write hi into "+agentFile+".", "--allowedTools", "Bash")
	r.check(t, out)
}

// codexConfig is Codex's config.toml: the daemon as a Responses API
// provider, and its vendor traffic (update check, analytics, plugin sync)
// switched off.
const codexConfig = `model = %q
model_provider = "helexa"
check_for_update_on_startup = false

[model_providers.helexa]
name = "helexa"
base_url = "http://%s/v1"
wire_api = "responses"
env_key = "AGENT_E2E_KEY"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
`

// TestCodexCLI runs `codex exec` with a provider at the daemon's
// Responses API: its exec_command tool runs the scripted command (outside
// Codex's sandbox, which needs kernel features a test machine may lack)
// and the final text is printed.
func TestCodexCLI(t *testing.T) {
	bin := agentBin(t, "codex")
	r := startAgentDaemon(t, agentScript("exec_command", `{"cmd": "echo hi > `+agentFile+`"}`))
	codexHome := t.TempDir()
	config := fmt.Sprintf(codexConfig, r.model, r.addr)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	out := r.run(t, bin, []string{"CODEX_HOME=" + codexHome, "AGENT_E2E_KEY=" + r.key},
		"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Write hi into "+agentFile+".")
	r.check(t, out)
}
