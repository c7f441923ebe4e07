package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

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
