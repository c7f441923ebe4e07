package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
)

// syncBuffer collects the daemon's log for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logOnFailure prints the daemon's log when the test has failed (defer it).
func logOnFailure(t *testing.T, logs *syncBuffer) {
	if t.Failed() {
		t.Logf("daemon log:\n%s", logs.String())
	}
}

// startDaemon builds bin/helexa, starts `helexa serve` on a free port and
// returns its address; the daemon is stopped with SIGTERM by stop. env
// entries (NAME=value) override its defaults.
func startDaemon(t *testing.T, apiKey string, env ...string) (addr string, stop func() error, logs *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	bin := envvars.TestBin.Get()
	if bin == "" {
		bin = filepath.Join(dir, "helexa")
		build := exec.Command("go", "build", "-o", bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building helexa: %v\n%s", err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--host", addr, "--shutdown-timeout", "10s")
	cmd.Env = append(os.Environ(),
		"HF_HUB_CACHE="+filepath.Join(dir, "hf"), "HF_HUB_OFFLINE=1",
		"HELEXA_STATE_DIR="+filepath.Join(dir, "state"), "HELEXA_API_KEY="+apiKey, "HELEXA_HOST=")
	cmd.Env = append(cmd.Env, env...)
	logs = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		select {
		case err := <-exited:
			return err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return errors.New("helexa serve did not exit within 30s of SIGTERM")
		}
	}
	t.Cleanup(func() { _ = stop() })
	c, err := api.NewClient(addr, apiKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitHealthy(ctx, c, exited, 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	return addr, stop, logs
}

// TestServeOpenAIEndToEnd drives the real `helexa serve` with the official
// OpenAI Go client.
func TestServeOpenAIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the helexa binary")
	}
	model := fixtures.Path(t, "models", "stories260K.gguf")
	const key = "e2e-secret"
	addr, stop, logs := startDaemon(t, key)
	defer logOnFailure(t, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))

	params := openai.ChatCompletionNewParams{
		Model:       model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
		MaxTokens:   openai.Int(12),
		Temperature: openai.Float(0),
		Seed:        openai.Int(7),
	}
	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if len(full.Choices) != 1 || full.Choices[0].Message.Content == "" {
		t.Fatalf("chat returned no content: %+v", full)
	}
	u := full.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.CompletionTokens > 12 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v", u)
	}
	if fr := full.Choices[0].FinishReason; fr != "length" && fr != "stop" {
		t.Errorf("finish_reason %q", fr)
	}

	checkChatStream(ctx, t, client, params, full)
	checkCompletionsModelsErrors(ctx, t, client, addr, model, params)

	if err := stop(); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	if !strings.Contains(logs.String(), "helexa stopped") {
		t.Errorf("no clean shutdown in the log")
	}
}

// checkChatStream streams the same greedy request as full and checks the
// chunks add up to the same answer, with usage (cached tokens) at the end.
func checkChatStream(ctx context.Context, t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, full *openai.ChatCompletion) {
	t.Helper()
	u := full.Usage
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	var last openai.ChatCompletionChunk
	for stream.Next() {
		last = stream.Current()
		acc.AddChunk(last)
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if chunks < 3 || len(acc.Choices) != 1 {
		t.Fatalf("stream: %d chunks, choices %+v", chunks, acc.Choices)
	}
	if got, want := acc.Choices[0].Message.Content, full.Choices[0].Message.Content; got != want {
		t.Errorf("greedy stream %q differs from the non-streaming answer %q", got, want)
	}
	if acc.Usage.CompletionTokens != u.CompletionTokens || acc.Usage.PromptTokens != u.PromptTokens {
		t.Errorf("stream usage %+v, want %+v", acc.Usage, u)
	}
	if len(last.Choices) != 0 || last.Usage.PromptTokensDetails.CachedTokens <= 0 {
		t.Errorf("the last chunk should carry usage with cached tokens (the prompt was sent before): %s", last.RawJSON())
	}
}

// checkCompletionsModelsErrors covers /v1/completions, /v1/models and the
// errors the OpenAI client sees.
func checkCompletionsModelsErrors(ctx context.Context, t *testing.T, client openai.Client, addr, model string, params openai.ChatCompletionNewParams) {
	t.Helper()
	comp, err := client.Completions.New(ctx, openai.CompletionNewParams{
		Model:     openai.CompletionNewParamsModel(model),
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(8), Temperature: openai.Float(0),
	})
	if err != nil || len(comp.Choices) != 1 || comp.Choices[0].Text == "" || comp.Usage.CompletionTokens <= 0 {
		t.Errorf("completion: %v %+v", err, comp)
	}

	models, err := client.Models.List(ctx)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	found := false
	name := engine.CanonicalName(model) // local models are listed by their resolved path
	for _, m := range models.Data {
		found = found || m.ID == name
	}
	if !found {
		t.Errorf("/v1/models lacks %s: %+v", name, models.Data)
	}
	if m, err := client.Models.Get(ctx, model); err != nil || m.ID != model || !strings.Contains(m.RawJSON(), `"state":"ready"`) {
		t.Errorf("/v1/models/{id}: %v %+v", err, m)
	}

	// Errors reach the OpenAI client with their status.
	bad := params
	bad.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	bad.N = openai.Int(2)
	_, err = client.Chat.Completions.New(ctx, bad)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "n = 2") {
		t.Errorf("n=2: %v", err)
	}
	noKey := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	if _, err := noKey.Models.List(ctx); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("wrong key: %v", err)
	}
}
