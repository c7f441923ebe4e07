package loader

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/models/synth/synthtest"
)

// output is what one completion produced.
type output struct {
	tokens []int32
	text   string
	reason string
	res    engine.Result
	err    error
}

func complete(ctx context.Context, m *engine.Manager, req engine.CompletionRequest) output {
	var o output
	o.res, o.err = m.Complete(ctx, req, func(d engine.Delta) error {
		o.text += d.Content
		for _, ti := range d.Tokens {
			o.tokens = append(o.tokens, ti.ID)
		}
		return nil
	})
	o.reason = o.res.FinishReason
	return o
}

func kindOf(err error) engine.Kind {
	var re *engine.Error
	if errors.As(err, &re) {
		return re.Kind
	}
	return ""
}

// serveSynth writes a tiny synth model shape (Q8_0, seed 15), loads it
// through the real loader with 16-token prefill chunks for parallel
// sequences of numCtx positions, wraps its executor with watch, and serves
// it from a manager of the same settings. It returns the manager and the
// model file.
func serveSynth(t *testing.T, shape string, numCtx, parallel int, watch func(executor.Executor) executor.Executor) (*engine.Manager, string) {
	t.Helper()
	path := synthtest.Write(t, shape, "q8_0", 15)
	l := &Files{Hub: hub.New(hub.Options{CacheDir: t.TempDir(), Offline: true}), Options: executor.LoadOptions{Threads: 2, ChunkSize: 16},
		Log: slog.New(slog.DiscardHandler)}
	m, err := l.Load(context.Background(), path, engine.LoadOptions{NumCtx: numCtx, NumParallel: parallel})
	if err != nil {
		t.Fatal(err)
	}
	m.Executor = watch(m.Executor)
	cfg := engine.DefaultConfig()
	cfg.NumCtx, cfg.KeepAlive, cfg.NumParallel, cfg.ChunkSize = numCtx, -1, parallel, 16
	mgr := engine.NewManager(cfg, modelLoader{m}, nil)
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	return mgr, path
}
