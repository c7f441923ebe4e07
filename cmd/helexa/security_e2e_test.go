package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
)

// rawRequest sends one request to the daemon with exactly the given
// headers (Host included) and returns the status and body.
func rawRequest(t *testing.T, addr, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e2eHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBrowserCannotDriveDaemon: what a hostile web page can send — a
// text/plain "simple request" (no CORS preflight), a request from its own
// Origin, a DNS-rebound Host — is refused by the real daemon, and the
// loaded model stays loaded.
func TestBrowserCannotDriveDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	addr, _, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	unload := fmt.Sprintf(`{"model":%q}`, model)
	if st, b := rawRequest(t, addr, "POST", "/api/load", unload, map[string]string{"Content-Type": "application/json"}); st != 200 {
		t.Fatalf("load: %d %s", st, b)
	}
	for _, tc := range []struct {
		name    string
		method  string
		headers map[string]string
		status  int
	}{
		{"text/plain simple request", "POST", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, 415},
		{"form simple request", "POST", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"foreign origin", "POST", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403},
		{"foreign origin, text/plain", "POST", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 403},
		{"DNS-rebound host", "POST", map[string]string{"Content-Type": "application/json", "Host": "evil.example:13131"}, 403},
		{"preflight from a foreign origin", "OPTIONS", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403},
	} {
		st, b := rawRequest(t, addr, tc.method, "/api/unload", unload, tc.headers)
		if st != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, st, b, tc.status)
		}
		if ps := psModels(t, addr); len(ps) != 1 {
			t.Fatalf("%s: the model was unloaded (ps %+v)", tc.name, ps)
		}
	}
	if st, b := rawRequest(t, addr, "GET", "/api/ps", "", map[string]string{"Origin": "https://evil.example"}); st != 403 {
		t.Errorf("a foreign page read /api/ps: %d %s", st, b)
	}
	// A local page and a plain client still work.
	if st, b := rawRequest(t, addr, "OPTIONS", "/api/unload", "", map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}); st != 204 {
		t.Errorf("preflight from a localhost page: %d %s", st, b)
	}
	if st, b := rawRequest(t, addr, "POST", "/api/unload", unload, map[string]string{"Content-Type": "application/json"}); st != 200 {
		t.Fatalf("unload from a local client: %d %s", st, b)
	}
	if ps := psModels(t, addr); len(ps) != 0 {
		t.Errorf("still loaded after a legitimate unload: %+v", ps)
	}
}

// TestOneClientCannotChangeSharedModel: a client asking for a tiny
// num_ctx is served by the loaded model as it is (the response says with
// which context) instead of reloading it for everyone, and a bogus model
// name never evicts the loaded model.
func TestOneClientCannotChangeSharedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	t.Setenv("HELEXA_MAX_LOADED_MODELS", "1") // a new model would have to evict the loaded one
	addr, _, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	json := map[string]string{"Content-Type": "application/json"}
	if st, b := rawRequest(t, addr, "POST", "/api/load", fmt.Sprintf(`{"model":%q,"num_ctx":1024}`, model), json); st != 200 {
		t.Fatalf("load: %d %s", st, b)
	}
	pid := psModels(t, addr)[0].RunnerPID
	st, b := rawRequest(t, addr, "POST", "/v1/completions",
		fmt.Sprintf(`{"model":%q,"prompt":"Once","max_tokens":4,"num_ctx":16}`, model), json)
	if st != 200 || !strings.Contains(b, `"options":{"num_ctx":1024}`) {
		t.Fatalf("a small num_ctx: %d %s, want it served with the loaded context of 1024 and say so", st, b)
	}
	ps := psModels(t, addr)
	if len(ps) != 1 || ps[0].Context != 1024 || ps[0].RunnerPID != pid {
		t.Fatalf("after a small num_ctx: %+v, want the same runner with context 1024", ps)
	}
	st, b = rawRequest(t, addr, "POST", "/v1/completions", `{"model":"nobody/no-such-model-GGUF","prompt":"x","max_tokens":1}`, json)
	if st != 404 {
		t.Errorf("a bogus model: %d %s, want 404", st, b)
	}
	if ps := psModels(t, addr); len(ps) != 1 || ps[0].RunnerPID != pid {
		t.Fatalf("after a bogus model name: %+v, want the model still loaded", ps)
	}
}

// TestHugePromptsAreRefusedBeforeTheyCost: a body over
// HELEXA_MAX_REQUEST_BYTES is a 413 before it is read, and a prompt whose
// byte length alone cannot fit the context is refused before it is
// tokenized (the error says so in bytes).
func TestHugePromptsAreRefusedBeforeTheyCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	t.Setenv("HELEXA_MAX_REQUEST_BYTES", "2000000")
	addr, _, logs := startDaemon(t, "")
	defer logOnFailure(t, logs)
	json := map[string]string{"Content-Type": "application/json"}
	big := strings.Repeat("Once upon a time ", 200_000) // 3.4 MB
	// Expect: 100-continue, as curl sends for large bodies: the daemon
	// answers from the headers alone, before reading any of the body.
	req, err := http.NewRequest("POST", "http://"+addr+"/v1/completions",
		strings.NewReader(fmt.Sprintf(`{"model":%q,"prompt":%q}`, model, big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	cl := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second, DisableKeepAlives: true}}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if st := resp.StatusCode; st != 413 || !strings.Contains(string(b), "2000000") {
		t.Fatalf("a 3.4 MB body: %d %s, want 413 naming the limit", st, b)
	}
	long := strings.Repeat("Once upon a time ", 60_000) // 1 MB: under the body cap, far over 2048 tokens
	st, body := rawRequest(t, addr, "POST", "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":1}`, model, long), json)
	if b := body; st != 400 || !strings.Contains(b, "context_length") || !strings.Contains(b, "bytes") {
		t.Fatalf("a 1 MB prompt for a 2048-token context: %d %s, want a context_length error from the byte count", st, b)
	}
}

// TestLocalModelHasOneName: a model loaded through a symbolic link and
// through a relative path is the same loaded model, named by its absolute,
// link-resolved path (in ps, for stop).
func TestLocalModelHasOneName(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	real, err := filepath.EvalSymlinks(model)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "alias.gguf")
	if err := os.Symlink(model, link); err != nil {
		t.Fatal(err)
	}
	addr, _, _ := startDaemon(t, "")
	json := map[string]string{"Content-Type": "application/json"}
	for _, name := range []string{model, link} {
		if st, b := rawRequest(t, addr, "POST", "/api/load", fmt.Sprintf(`{"model":%q}`, name), json); st != 200 {
			t.Fatalf("load %s: %d %s", name, st, b)
		}
	}
	ps := psModels(t, addr)
	if len(ps) != 1 || ps[0].Name != real {
		t.Fatalf("ps after loading the file and a link to it: %+v, want one model named %s", ps, real)
	}
	if st, b := rawRequest(t, addr, "POST", "/api/unload", fmt.Sprintf(`{"model":%q}`, link), json); st != 200 {
		t.Fatalf("unload through the link: %d %s", st, b)
	}
}

// TestSmallerHardening: a NUL byte in a model name is a 400 (not a 500),
// unloading a model that was never loaded is a 404, and a daemon refuses
// to start with an all-whitespace API key.
func TestSmallerHardening(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	addr, _, _ := startDaemon(t, "")
	json := map[string]string{"Content-Type": "application/json"}
	if st, b := rawRequest(t, addr, "POST", "/v1/completions", `{"model":"/tmp/a\u0000b.gguf","prompt":"x"}`, json); st != 400 || !strings.Contains(b, "control character") {
		t.Errorf("a NUL byte in the model name: %d %s", st, b)
	}
	if st, b := rawRequest(t, addr, "POST", "/api/unload", `{"model":"never/loaded"}`, json); st != 404 {
		t.Errorf("unloading a model that is not loaded: %d %s", st, b)
	}
	bin := buildRunBinary(t)
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1:0")
	cmd.Env = append(runEnv(t), "HELEXA_API_KEY=   ")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "blank") {
		t.Errorf("serve with a blank API key: %v\n%s", err, out)
	}
}
