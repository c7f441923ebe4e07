package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// weightFacts reads the architecture and parameter count of cached GGUF
// files for ollama's /api/tags details, remembering them by path and
// modification time so a listing reads each header once.
type weightFacts struct {
	mu sync.Mutex
	m  map[string]fileFacts
}

type fileFacts struct {
	mod    time.Time
	family string
	params int64
}

// of returns a GGUF file's architecture and parameter count; a file that
// is not GGUF, or cannot be read, has none.
func (w *weightFacts) of(path string, mod time.Time) (string, int64) {
	if !strings.HasSuffix(strings.ToLower(path), ".gguf") {
		return "", 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.m[path]; ok && f.mod.Equal(mod) {
		return f.family, f.params
	}
	var f fileFacts
	if g, err := gguf.Open(path); err == nil {
		f.family = g.Arch()
		for _, t := range g.Tensors() {
			f.params += t.Elements()
		}
		_ = g.Close()
	}
	f.mod = mod
	if w.m == nil {
		w.m = map[string]fileFacts{}
	}
	w.m[path] = f
	return f.family, f.params
}

// hubRemover serves DELETE /api/delete: it removes a model from the
// Hugging Face cache, as `helexa rm` does.
type hubRemover struct{}

func (hubRemover) Remove(ctx context.Context, model string) error {
	hc, err := newHubClient("", nil)
	if err != nil {
		return err
	}
	if err := hc.Remove(ctx, model); err != nil {
		kind := engine.KindInternal
		switch {
		case errors.Is(err, hub.ErrNotCached):
			kind = engine.KindNotFound
		case errors.Is(err, hub.ErrBadReference):
			kind = engine.KindBadRequest
		}
		return &engine.Error{Kind: kind, Msg: fmt.Sprintf("delete %s", model), Err: err}
	}
	return nil
}

// serveVersion is the version /api/version reports.
func serveVersion() string {
	v, _, _ := buildVersion()
	return v
}

// aliasesByRef inverts the alias table: each reference's short names, so
// /api/tags can list a cached model under them. A target that does not
// parse is left out (loading it reports the error).
func aliasesByRef(aliases map[string]string) map[string][]string {
	out := map[string][]string{}
	for name, target := range aliases {
		r, err := hub.ParseRef(target, nil)
		if err != nil || r.Local() {
			continue
		}
		key := strings.ToLower(r.String())
		out[key] = append(out[key], name)
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}
