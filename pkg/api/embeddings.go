package api

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// EmbeddingRequest is the body of POST /v1/embeddings.
type EmbeddingRequest struct {
	Model string `json:"model"`
	// Input is a string, a list of strings, token ids or lists of them.
	Input EmbeddingInput `json:"input"`
	// EncodingFormat is "float" (default) or "base64" (little-endian
	// float32, as OpenAI sends).
	EncodingFormat string `json:"encoding_format,omitempty"`
	// Pooling (helexa extension) is "mean" (default) or "last".
	Pooling   string    `json:"pooling,omitempty"`
	KeepAlive *Duration `json:"keep_alive,omitempty"`
}

// Embedding is one entry of an embeddings response: Embedding is a list of
// numbers or, with encoding_format base64, a string.
type Embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// EmbeddingResponse is the answer of POST /v1/embeddings.
type EmbeddingResponse struct {
	Object string      `json:"object"`
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// embeddings serves POST /v1/embeddings: unit-length, mean- (or last-)
// token-pooled final hidden states of the model.
func (s *Server) embeddings(c *gin.Context) {
	var req EmbeddingRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	if err := validateModel(req.Model); err != nil {
		s.fail(c, err)
		return
	}
	if req.Input.Len() == 0 || req.Input.Len() > maxPrompts {
		s.fail(c, badRequest("field \"input\" must hold 1 to %d strings or token-id lists", maxPrompts))
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		s.fail(c, badRequest("encoding_format %q: use \"float\" or \"base64\"", req.EncodingFormat))
		return
	}
	em, ok := s.cfg.Service.(engine.Embedder)
	if !ok {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{Message: "this server's engine does not compute embeddings", Type: "invalid_request_error", Code: "not_implemented"})
		return
	}
	var keep *time.Duration
	if req.KeepAlive != nil {
		keep = &req.KeepAlive.Duration
	}
	res, err := em.Embed(c.Request.Context(), engine.EmbedRequest{Model: req.Model, Inputs: req.Input.Texts,
		Tokens: req.Input.Tokens, Pooling: req.Pooling, KeepAlive: keep})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	out := EmbeddingResponse{Object: "list", Model: req.Model,
		Usage: Usage{PromptTokens: res.PromptTokens, TotalTokens: res.PromptTokens}}
	for i, v := range res.Embeddings {
		var e any = v
		if req.EncodingFormat == "base64" {
			e = base64Floats(v)
		}
		out.Data = append(out.Data, Embedding{Object: "embedding", Index: i, Embedding: e})
	}
	c.JSON(http.StatusOK, out)
}

// base64Floats encodes v as OpenAI's base64 embeddings: little-endian
// float32.
func base64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
