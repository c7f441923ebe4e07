package api

import (
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// pullRecord converts a Puller's progress to ollama's status record, with
// helexa's event kind and file alongside. ollama's digest names the file
// being downloaded (helexa pulls files, not ollama layers).
func pullRecord(p PullProgress) OllamaPullRecord {
	r := OllamaPullRecord{Event: p.Status, File: p.File, Digest: p.File, Total: p.Total, Completed: p.Completed}
	switch p.Status {
	case "success":
		return OllamaPullRecord{Status: "success"}
	case "verify":
		r.Status = "verifying sha256 digest"
	case "notice":
		r.Status = firstNonEmpty(p.Message, "pulling manifest")
	case "done", "cached":
		r.Status = "pulling " + p.File
		if r.Completed < r.Total {
			r.Completed = r.Total
		}
	default:
		r.Status = "pulling " + p.File
	}
	if p.File == "" {
		r.Status = firstNonEmpty(p.Message, p.Status)
	}
	return r
}

// pull serves POST /api/pull: progress as ollama's NDJSON status records
// ("pulling manifest", "pulling <file>" with total and completed,
// "verifying sha256 digest", "success"), or, with "stream": false, the
// last record only.
func (s *Server) pull(c *gin.Context) {
	var req PullRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	model := ollamaName(req.Model, req.Name)
	if err := validateModel(model); err != nil {
		s.fail(c, err)
		return
	}
	if s.cfg.Puller == nil {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{
			Message: "this server has no model downloader; pull with `helexa pull` instead",
			Type:    "server_error", Code: string(engine.KindInternal),
		})
		return
	}
	pull := s.cfg.Puller.Pull
	if cp, ok := s.cfg.Puller.(CachedPuller); ok && req.PreferCache {
		pull = cp.PullCached
	}
	if !streams(req.Stream) {
		if err := pull(c.Request.Context(), model, func(PullProgress) {}); err != nil {
			s.failOrGone(c, err)
			return
		}
		c.JSON(http.StatusOK, OllamaPullRecord{Status: "success"})
		return
	}
	w := s.newNDJSONWriter(c)
	var mu sync.Mutex
	write := func(r OllamaPullRecord) {
		mu.Lock()
		defer mu.Unlock()
		_ = w.send(r)
	}
	write(OllamaPullRecord{Status: "pulling manifest"})
	err := pull(c.Request.Context(), model, func(p PullProgress) { write(pullRecord(p)) })
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		s.finishNDJSON(c, w, err)
		return
	}
	write(OllamaPullRecord{Status: "success"})
}
