package loader

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/replay"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/sampling"
)

// TestFilesWrap: Wrap gets the model's executor and tokenizer and the
// model runs what it returns; a Wrap that fails fails the load, with the
// executor closed.
func TestFilesWrap(t *testing.T) {
	ctx := context.Background()
	path := fixtures.Path(t, "models", "stories260K.gguf")
	var inner executor.Executor
	l := &Files{Hub: hub.New(hub.Options{CacheDir: t.TempDir(), Offline: true}), Options: executor.LoadOptions{Threads: 2},
		Log: slog.New(slog.DiscardHandler),
		Wrap: func(ex executor.Executor, tok *tokenizer.Tokenizer) (executor.Executor, error) {
			if tok == nil {
				t.Error("Wrap got no tokenizer")
			}
			inner = ex
			return nil, errors.New("refused")
		}}
	_, err := l.Load(ctx, path, engine.LoadOptions{NumCtx: 64})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != engine.KindBadRequest {
		t.Fatalf("load with a failing Wrap: %v, want a bad-request engine error", err)
	}
	if _, err := inner.NewSeq(sampling.Params{}); !errors.Is(err, executor.ErrClosed) {
		t.Errorf("the unwrapped executor is still open (NewSeq: %v)", err)
	}

	l.Wrap = replay.Text("Once")
	m, err := l.Load(ctx, path, engine.LoadOptions{NumCtx: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Executor.Close(); _ = m.Closer() }()
	if _, ok := m.Executor.(*replay.Executor); !ok {
		t.Errorf("the model runs a %T, not the wrapped executor", m.Executor)
	}
}
