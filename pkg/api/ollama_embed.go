package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// ollamaEmbed serves POST /api/embed: one unit-length embedding per input.
func (s *Server) ollamaEmbed(c *gin.Context) {
	var req OllamaEmbedRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	if req.Input.Len() == 0 || req.Input.Len() > maxPrompts {
		s.fail(c, badRequest("field \"input\" must hold 1 to %d strings", maxPrompts))
		return
	}
	if req.Dimensions != 0 {
		s.fail(c, badRequest("dimensions = %d is not supported: helexa returns the model's full embedding; leave \"dimensions\" out", req.Dimensions))
		return
	}
	res, total, ok := s.ollamaEmbedRun(c, engine.EmbedRequest{Model: req.Model, Inputs: req.Input.Texts,
		Tokens: req.Input.Tokens, KeepAlive: durationPtr(req.KeepAlive)})
	if !ok {
		return
	}
	c.JSON(http.StatusOK, OllamaEmbedResponse{Model: req.Model, Embeddings: res.Embeddings,
		OllamaMetrics: &OllamaMetrics{TotalDuration: total, PromptEvalCount: res.PromptTokens}})
}

// ollamaEmbeddings serves the older POST /api/embeddings: one embedding
// of one prompt.
func (s *Server) ollamaEmbeddings(c *gin.Context) {
	var req OllamaEmbeddingsRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	if req.Prompt == "" {
		s.fail(c, badRequest("field \"prompt\" is required: the text to embed"))
		return
	}
	res, _, ok := s.ollamaEmbedRun(c, engine.EmbedRequest{Model: req.Model, Inputs: []string{req.Prompt},
		KeepAlive: durationPtr(req.KeepAlive)})
	if !ok {
		return
	}
	c.JSON(http.StatusOK, gin.H{"embedding": res.Embeddings[0]})
}

// ollamaEmbedRun checks the model and runs the embedding; on failure it
// answers with the error and reports false.
func (s *Server) ollamaEmbedRun(c *gin.Context, req engine.EmbedRequest) (engine.EmbedResult, int64, bool) {
	if err := validateModel(req.Model); err != nil {
		s.fail(c, err)
		return engine.EmbedResult{}, 0, false
	}
	em, ok := s.cfg.Service.(engine.Embedder)
	if !ok {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{Message: "this server's engine does not compute embeddings",
			Type: "invalid_request_error", Code: "not_implemented"})
		return engine.EmbedResult{}, 0, false
	}
	start := s.cfg.Now()
	res, err := em.Embed(c.Request.Context(), req)
	if err != nil {
		s.failOrGone(c, err)
		return engine.EmbedResult{}, 0, false
	}
	return res, s.cfg.Now().Sub(start).Nanoseconds(), true
}
