package main

import (
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/engine/loader"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/executor/replay"
	"github.com/helexa/helexa/pkg/hub"
)

// newEngine builds the in-process engine from the environment, the same
// way serve does: an engine.Manager over the GGUF loader, resolving
// references through the Hugging Face cache with progress reported to
// progress. tweak, when set, adjusts the configuration (run keeps its
// model loaded for the life of the process).
func newEngine(log *slog.Logger, progress hub.ProgressFunc, tweak func(*engine.Config)) (*engine.Manager, error) {
	return newEngineWith(log, progress, tweak, localStarter{log: log})
}

// newEngineWith is newEngine with the executors started by exec.
func newEngineWith(log *slog.Logger, progress hub.ProgressFunc, tweak func(*engine.Config), exec loader.ExecStarter) (*engine.Manager, error) {
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if tweak != nil {
		tweak(&cfg)
	}
	threads, err := envvars.NumThreads.Int() // 0 = all cores
	if err != nil {
		return nil, err
	}
	hc, err := newHubClientWith("", progress, true)
	if err != nil {
		return nil, err
	}
	tmpl, err := readEnvFile(envvars.ChatTemplate)
	if err != nil {
		return nil, err
	}
	script, err := readEnvFile(envvars.TestReplay)
	if err != nil {
		return nil, err
	}
	kvType := envvars.KVType.Get()
	if err := local.CheckKVType(kvType); err != nil {
		return nil, fmt.Errorf("%s: %w", envvars.KVType.Name, err)
	}
	ld := &loader.Files{Hub: hc, Options: executor.LoadOptions{Threads: threads, ChunkSize: cfg.ChunkSize, KVType: kvType},
		Exec: exec, Log: log, ChatTemplate: tmpl}
	if script != "" { // tests only: every model writes the script
		ld.Wrap = replay.Texts(replay.Split(script))
	}
	return engine.NewManager(cfg, ld, log), nil
}

// readEnvFile reads the file an environment variable names ("" when it is
// unset).
func readEnvFile(v envvars.Var) (string, error) {
	path := v.Get()
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s names a file that cannot be read (set it to a readable file, or unset it): %w", v.Name, err)
	}
	return string(data), nil
}

// progressRouter forwards hub events to a sink that can change while the
// engine lives (progress bars before the chat UI starts, the UI's status
// line after).
type progressRouter struct {
	mu   sync.Mutex
	sink hub.ProgressFunc
	seen bool // an event has arrived
}

func (p *progressRouter) set(f hub.ProgressFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sink = f
}

func (p *progressRouter) emit(e hub.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = true
	if p.sink != nil {
		p.sink(e)
	}
}

// sawEvents reports whether any event has arrived (downloads draw their
// own progress bars, so the loading spinner stays quiet).
func (p *progressRouter) sawEvents() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}
