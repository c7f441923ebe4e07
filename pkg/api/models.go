package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// StateAvailable is the /v1/models state of a model that is on disk (in the
// local cache) but not loaded; a request naming it loads it.
const StateAvailable = "available"

// CatalogModel is one model available locally without being loaded.
type CatalogModel struct {
	// ID is the reference that loads it (org/repo[:QUANT][@REV]).
	ID string
	// Path is the weights file (first shard) or model folder; a loaded
	// model with the same path is the same model.
	Path      string
	Format    string // "gguf", "safetensors"
	Quant     string
	SizeBytes int64
	Modified  time.Time
	// Family (the architecture) and Parameters describe the weights for
	// ollama's /api/tags details; zero when unknown.
	Family     string
	Parameters int64
	// Aliases are the short names in the alias table that load this
	// model (qwen3:0.6b); /api/tags lists each as a name of its own.
	Aliases []string
}

// Catalog lists the models on disk (cmd/helexa adapts the Hugging Face
// cache of pkg/hub), so /v1/models can offer models that are not loaded.
type Catalog interface {
	List(ctx context.Context) ([]CatalogModel, error)
}

// modelEntry is a /v1/models entry with every name that refers to it.
type modelEntry struct {
	Model
	names []string
	// path, family and params describe the weights (ollama's details);
	// ref and aliases are the catalog's names for them.
	path, family, ref string
	params            int64
	aliases           []string
}

func (e *modelEntry) named(id string) bool {
	for _, n := range e.names {
		if n != "" && n == id {
			return true
		}
	}
	return false
}

// toModel converts a loaded model's status to a /v1/models entry.
func toModel(st engine.ModelStatus, created int64) Model {
	m := Model{
		ID: st.Name, Object: "model", Created: created, OwnedBy: "helexa",
		State: st.State, Loaded: true, SizeBytes: st.SizeBytes, Processor: st.Processor,
		Context: st.Context, Active: st.Active, Error: st.Error,
	}
	if !st.ExpiresAt.IsZero() {
		m.ExpiresAt = ptr(st.ExpiresAt)
	}
	return m
}

// catalogModel converts a model on disk to a /v1/models entry.
func catalogModel(cm CatalogModel, created int64) Model {
	if !cm.Modified.IsZero() {
		created = cm.Modified.Unix()
	}
	return Model{
		ID: cm.ID, Object: "model", Created: created, OwnedBy: "helexa",
		State: StateAvailable, SizeBytes: cm.SizeBytes, Format: cm.Format, Quant: cm.Quant,
	}
}

// models merges the loaded models (first, with their state) and the
// catalog's models that are not loaded. A catalog error is returned with
// the loaded models, so callers can still answer with those.
func (s *Server) models(ctx context.Context) ([]*modelEntry, error) {
	sts, err := s.cfg.Service.PS(ctx)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now().Unix()
	out := make([]*modelEntry, 0, len(sts))
	for _, st := range sts {
		out = append(out, &modelEntry{Model: toModel(st, now), names: []string{st.Name, st.Path}, path: st.Path})
	}
	if s.cfg.Catalog == nil {
		return out, nil
	}
	cms, err := s.cfg.Catalog.List(ctx)
	if err != nil {
		return out, err
	}
	loaded := len(out)
	for _, cm := range cms {
		if e := findLoaded(out[:loaded], cm); e != nil {
			// The same model, loaded: keep its state, learn its other names.
			e.names = append(append(e.names, cm.ID, cm.Path), cm.Aliases...)
			e.Format, e.Quant = cm.Format, cm.Quant
			e.family, e.params, e.ref, e.aliases = cm.Family, cm.Parameters, cm.ID, cm.Aliases
			continue
		}
		out = append(out, &modelEntry{Model: catalogModel(cm, now), names: append([]string{cm.ID, cm.Path}, cm.Aliases...),
			path: cm.Path, family: cm.Family, params: cm.Parameters, ref: cm.ID, aliases: cm.Aliases})
	}
	return out, nil
}

// findLoaded returns the loaded entry that is the catalog model cm.
func findLoaded(loaded []*modelEntry, cm CatalogModel) *modelEntry {
	for _, e := range loaded {
		if e.named(cm.ID) || e.named(cm.Path) {
			return e
		}
	}
	return nil
}

// listModels serves GET /v1/models: the loaded models with their state,
// then every model in the local cache that is not loaded ("available").
// When the cache cannot be read, the loaded models are still listed and
// the failure is logged.
func (s *Server) listModels(c *gin.Context) {
	entries, err := s.models(c.Request.Context())
	if err != nil && entries == nil {
		s.fail(c, err)
		return
	}
	if err != nil {
		s.log.Warn("listing the model cache failed; /v1/models shows only loaded models", "err", err)
	}
	out := ModelList{Object: "list", Data: make([]Model, 0, len(entries))}
	for _, e := range entries {
		out.Data = append(out.Data, e.Model)
	}
	c.JSON(http.StatusOK, out)
}

// getModel serves GET /v1/models/{id}; the id may contain slashes. It
// answers for a loaded model (by name or path) and for one in the cache.
func (s *Server) getModel(c *gin.Context) {
	id := strings.TrimPrefix(c.Param("id"), "/")
	if id == "" {
		s.listModels(c)
		return
	}
	entries, err := s.models(c.Request.Context())
	canon := engine.CanonicalName(id) // a local file is listed under its resolved path
	for _, e := range entries {
		if e.named(id) || e.named(canon) {
			m := e.Model
			m.ID = id
			c.JSON(http.StatusOK, m)
			return
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if isLocalPath(id) {
		s.fail(c, engine.Errorf(engine.KindNotFound,
			"model %q is neither loaded nor in the local cache; a request naming the file loads it (or POST /api/load)", id))
		return
	}
	s.fail(c, engine.Errorf(engine.KindNotFound,
		"model %q is neither loaded nor in the local cache; pull it (`helexa pull %s` or POST /api/pull), "+
			"or see GET /v1/models for the models available", id, id))
}

// isLocalPath reports an id that names a file rather than a Hub reference.
func isLocalPath(id string) bool {
	return strings.HasPrefix(id, "/") || strings.HasPrefix(id, "./") || strings.HasPrefix(id, "../") ||
		strings.HasSuffix(strings.ToLower(id), ".gguf")
}
