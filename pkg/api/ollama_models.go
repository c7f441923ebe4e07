package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// This file serves ollama's model endpoints: /api/tags, /api/show,
// /api/ps, /api/delete and /api/version, each in ollama's shape with
// helexa's own fields alongside.

// Remover deletes a model from the local cache (DELETE /api/delete);
// cmd/helexa adapts pkg/hub.
type Remover interface {
	Remove(ctx context.Context, model string) error
}

// parameterSize formats a parameter count as ollama does ("596.05M",
// "8.0B"); "" when unknown.
func parameterSize(n int64) string {
	switch {
	case n <= 0:
		return ""
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
}

// modelFormat is ollama's details.format of a weights path.
func modelFormat(path, known string) string {
	if known != "" {
		return known
	}
	if strings.HasSuffix(strings.ToLower(path), ".gguf") {
		return "gguf"
	}
	if path != "" {
		return "safetensors"
	}
	return ""
}

// details builds ollama's details object.
func details(format, family string, params int64, quant string) OllamaDetails {
	d := OllamaDetails{Format: format, Family: family, Families: []string{}, ParameterSize: parameterSize(params), QuantizationLevel: quant}
	if family != "" {
		d.Families = []string{family}
	}
	return d
}

// digest is a stable id for a model: the SHA-256 of its path (or name).
// helexa has no ollama manifests, so this is not a content hash.
func digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ollamaTags serves GET /api/tags: the models in the local cache and the
// loaded ones, under names that load them: the Hub reference
// (org/repo:QUANT) or the path, then each alias of it (qwen3:0.6b), as
// ollama lists each name of a model.
func (s *Server) ollamaTags(c *gin.Context) {
	entries, err := s.models(c.Request.Context())
	if err != nil && entries == nil {
		s.fail(c, err)
		return
	}
	if err != nil {
		s.log.Warn("listing the model cache failed; /api/tags shows only loaded models", "err", err)
	}
	out := OllamaTags{Models: make([]OllamaModel, 0, len(entries))}
	seen := map[string]bool{} // a model loaded under two names is listed once
	for _, e := range entries {
		path := e.path
		m := OllamaModel{
			ModifiedAt: time.Unix(e.Created, 0).UTC(), Size: e.SizeBytes,
			Digest:  digest(firstNonEmpty(path, e.ID)),
			Details: details(modelFormat(path, e.Format), e.family, e.params, e.Quant),
			Path:    path, Loaded: e.Loaded,
		}
		for _, name := range append([]string{firstNonEmpty(e.ref, e.ID)}, e.aliases...) {
			if seen[name] {
				continue
			}
			seen[name] = true
			m.Name, m.Model = name, name
			out.Models = append(out.Models, m)
		}
	}
	c.JSON(http.StatusOK, out)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ollamaShow serves POST /api/show: ollama's description of a model
// (loading it if needed), with engine.ModelDetails alongside.
func (s *Server) ollamaShow(c *gin.Context) {
	var req ShowRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	model := ollamaName(req.Model, req.Name)
	if err := validateModel(model); err != nil {
		s.fail(c, err)
		return
	}
	d, err := s.cfg.Service.Show(c.Request.Context(), model)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, showResponse(d, s.cfg.Now()))
}

// showResponse converts the engine's details to ollama's /api/show shape.
func showResponse(d engine.ModelDetails, now time.Time) ShowResponse {
	info := map[string]any{"general.architecture": d.Arch}
	if d.Parameters > 0 {
		info["general.parameter_count"] = d.Parameters
	}
	if d.Arch != "" && d.ContextTrain > 0 {
		info[d.Arch+".context_length"] = d.ContextTrain
	}
	if d.Arch != "" && d.VocabSize > 0 {
		info[d.Arch+".vocab_size"] = d.VocabSize
	}
	var params string
	if d.Context > 0 {
		params = fmt.Sprintf("num_ctx %d", d.Context)
	}
	return ShowResponse{
		Modelfile:    fmt.Sprintf("# helexa serves this model from its own file; there is no Modelfile\nFROM %s\n", firstNonEmpty(d.Path, d.Name)),
		Parameters:   params,
		Template:     d.Template,
		Details:      details(modelFormat(d.Path, ""), d.Arch, d.Parameters, d.Quant),
		ModelInfo:    info,
		Capabilities: capabilities(d.Template),
		ModifiedAt:   now.UTC(),
		ModelDetails: d,
	}
}

// capabilities are ollama's capabilities of a model, read from its chat
// template: every model completes; one whose template renders tools
// calls them, one whose template has reasoning markers thinks.
func capabilities(template string) []string {
	out := []string{"completion"}
	if strings.Contains(template, "tools") {
		out = append(out, "tools")
	}
	for _, mark := range []string{"<think>", "enable_thinking", "reasoning_content"} {
		if strings.Contains(template, mark) {
			out = append(out, "thinking")
			break
		}
	}
	return out
}

// ollamaPS serves GET /api/ps: the loaded models in ollama's shape, with
// engine.ModelStatus alongside.
func (s *Server) ollamaPS(c *gin.Context) {
	sts, err := s.cfg.Service.PS(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	var cat []CatalogModel
	if s.cfg.Catalog != nil {
		cat, _ = s.cfg.Catalog.List(c.Request.Context()) // details only; a failure leaves them out
	}
	out := PSResponse{Models: make([]PSModel, 0, len(sts))}
	for _, st := range sts {
		out.Models = append(out.Models, psModel(st, cat))
	}
	c.JSON(http.StatusOK, out)
}

// psModel converts a loaded model's status, with the catalog's details
// of its file when it is in the cache.
func psModel(st engine.ModelStatus, cat []CatalogModel) PSModel {
	m := PSModel{Name: st.Name, Model: st.Name, Size: st.SizeBytes, Digest: digest(firstNonEmpty(st.Path, st.Name)),
		ExpiresAt: st.ExpiresAt, ContextLength: st.Context, ModelStatus: st}
	m.Details = details(modelFormat(st.Path, ""), "", 0, "")
	for _, cm := range cat {
		if cm.Path == st.Path || cm.ID == st.Name {
			m.Details = details(modelFormat(st.Path, cm.Format), cm.Family, cm.Parameters, cm.Quant)
			break
		}
	}
	if st.Processor != "" && st.Processor != "CPU" {
		m.SizeVRAM = st.SizeBytes
	}
	return m
}

// status converts a /api/ps entry back to the engine's status.
func (m PSModel) status() engine.ModelStatus {
	st := m.ModelStatus
	st.Name = firstNonEmpty(m.Name, m.Model)
	st.ExpiresAt = m.ExpiresAt
	return st
}

// ollamaDelete serves DELETE /api/delete: it unloads the model if it is
// loaded and removes it from the local cache.
func (s *Server) ollamaDelete(c *gin.Context) {
	var req DeleteRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	model := ollamaName(req.Model, req.Name)
	if err := validateModel(model); err != nil {
		s.fail(c, err)
		return
	}
	if s.cfg.Remover == nil {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{
			Message: "this server cannot delete models; use `helexa rm` instead",
			Type:    "server_error", Code: string(engine.KindInternal),
		})
		return
	}
	if err := s.unloadAll(c.Request.Context(), model); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.cfg.Remover.Remove(c.Request.Context(), model); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusOK)
}

// unloadAll unloads a model under every name it is loaded by: its own,
// and any other name of the same weights file (a reference and its alias).
func (s *Server) unloadAll(ctx context.Context, model string) error {
	entries, _ := s.models(ctx) // a catalog failure leaves the loaded models
	paths := map[string]bool{}
	for _, e := range entries {
		if e.named(model) && e.path != "" {
			paths[e.path] = true
		}
	}
	sts, err := s.cfg.Service.PS(ctx)
	if err != nil {
		return err
	}
	for _, st := range sts {
		if st.Name != model && !paths[st.Path] {
			continue
		}
		if err := s.cfg.Service.Unload(ctx, st.Name); err != nil && toRunnerError(err).Kind != engine.KindNotFound {
			return err
		}
	}
	return nil
}

// ollamaVersion serves GET /api/version.
func (s *Server) ollamaVersion(c *gin.Context) {
	v := s.cfg.Version
	if v == "" {
		v = "0.0.0"
	}
	c.JSON(http.StatusOK, gin.H{"version": v})
}
