package tp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/rpc"
)

// TestWorkerKilledWhileStarting: a worker rank that dies before the group
// is up fails the start with an error naming the rank, never a panic in
// the shutdown that follows.
func TestWorkerKilledWhileStarting(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	start := ProcessStarter(rpc.ProcessOptions{Path: "/bin/sh", Args: []string{"-c", "kill -KILL $$"}, Name: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Load(ctx, model, Options{Load: executor.LoadOptions{TP: 2}, Device: &fakeDevice{}, Start: start, Timeout: 10 * time.Second})
	if err == nil {
		e.Close()
		t.Fatal("the group started with a dead rank")
	}
	if !strings.Contains(err.Error(), "rank 1 of 2") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("err = %v, want it to name rank 1 and how it ended", err)
	}
}
