package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// ps serves GET /api/ps.
func (s *Server) ps(c *gin.Context) {
	sts, err := s.cfg.Service.PS(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	if sts == nil {
		sts = []engine.ModelStatus{}
	}
	c.JSON(http.StatusOK, PSResponse{Models: sts})
}

// load serves POST /api/load.
func (s *Server) load(c *gin.Context) {
	var req LoadRequest
	if !s.bind(c, &req) {
		return
	}
	if err := validateModel(req.Model); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkNumCtx(req.NumCtx); err != nil {
		s.fail(c, err)
		return
	}
	if req.TP < 0 || req.TP > engine.MaxTP {
		s.fail(c, engine.Errorf(engine.KindBadRequest, "tp %d: want 1 to %d tensor-parallel ranks (or leave it out for the daemon's default)", req.TP, engine.MaxTP))
		return
	}
	st, err := s.cfg.Service.Load(c.Request.Context(), engine.LoadRequest{
		Model: req.Model, NumCtx: req.NumCtx, KeepAlive: durationPtr(req.KeepAlive), TP: req.TP,
	})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// decodeModelRequest reads a {"model": ...} body.
func (s *Server) decodeModelRequest(c *gin.Context) (string, bool) {
	var req ModelRequest
	if !s.bind(c, &req) {
		return "", false
	}
	if err := validateModel(req.Model); err != nil {
		s.fail(c, err)
		return "", false
	}
	return req.Model, true
}

// unload serves POST /api/unload.
func (s *Server) unload(c *gin.Context) {
	model, ok := s.decodeModelRequest(c)
	if !ok {
		return
	}
	if err := s.cfg.Service.Unload(c.Request.Context(), model); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "unloaded", "model": model})
}

// show serves POST /api/show.
func (s *Server) show(c *gin.Context) {
	model, ok := s.decodeModelRequest(c)
	if !ok {
		return
	}
	d, err := s.cfg.Service.Show(c.Request.Context(), model)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}

// pull serves POST /api/pull, streaming progress as NDJSON lines.
func (s *Server) pull(c *gin.Context) {
	var req PullRequest
	if !s.bind(c, &req) {
		return
	}
	if err := validateModel(req.Model); err != nil {
		s.fail(c, err)
		return
	}
	model := req.Model
	if s.cfg.Puller == nil {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{
			Message: "this server has no model downloader; pull with `helexa pull` instead",
			Type:    "server_error", Code: string(engine.KindInternal),
		})
		return
	}
	var mu sync.Mutex
	started := false
	write := func(p PullProgress) error {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			c.Header("Content-Type", "application/x-ndjson")
			c.Status(http.StatusOK)
			started = true
		}
		b, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encoding progress: %w", err)
		}
		if _, err := c.Writer.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("writing progress: %w", err)
		}
		c.Writer.Flush()
		return nil
	}
	pull := s.cfg.Puller.Pull
	if cp, ok := s.cfg.Puller.(CachedPuller); ok && req.PreferCache {
		pull = cp.PullCached
	}
	err := pull(c.Request.Context(), model, func(p PullProgress) { _ = write(p) })
	mu.Lock()
	wasStarted := started
	mu.Unlock()
	switch {
	case err != nil && !wasStarted:
		s.failOrGone(c, err)
	case err != nil:
		_, body := s.clientError(c, err)
		_ = write(PullProgress{Status: "error", Error: &body.Error})
	default:
		_ = write(PullProgress{Status: "success"})
	}
}
