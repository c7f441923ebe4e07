package api

import (
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// This file serves llama-server's utility endpoints: /tokenize,
// /detokenize, /apply-template and /props. llama-server serves one model;
// helexa serves many, so each takes a "model" (for /props, ?model=), which
// may be left out while exactly one model is loaded.

// utilityRoutes registers llama-server's utility endpoints.
func (s *Server) utilityRoutes(r gin.IRoutes) {
	r.POST("/tokenize", s.tokenize)
	r.POST("/detokenize", s.detokenize)
	r.POST("/apply-template", s.applyTemplate)
	r.GET("/props", s.props)
}

// TokenizeRequest is the body of POST /tokenize.
type TokenizeRequest struct {
	Model   string `json:"model"`
	Content string `json:"content"`
	// AddSpecial adds BOS as the model wants (default false, as
	// llama-server); ParseSpecial recognises special-token text (default
	// true).
	AddSpecial   bool  `json:"add_special"`
	ParseSpecial *bool `json:"parse_special,omitempty"`
	// WithPieces answers {id, piece} objects instead of bare ids.
	WithPieces bool `json:"with_pieces"`
}

// TokenPiece is one token of a /tokenize answer with_pieces: piece is the
// token's text, or its bytes when they are not valid UTF-8 on their own.
type TokenPiece struct {
	ID    int32 `json:"id"`
	Piece any   `json:"piece"`
}

// DetokenizeRequest is the body of POST /detokenize.
type DetokenizeRequest struct {
	Model  string  `json:"model"`
	Tokens []int32 `json:"tokens"`
}

// texter returns the engine's tokenizer access, or answers 501.
func (s *Server) texter(c *gin.Context) (engine.Texter, bool) {
	t, ok := s.cfg.Service.(engine.Texter)
	if !ok {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{Message: "this server's engine cannot tokenize on its own",
			Type: "invalid_request_error", Code: "not_implemented"})
	}
	return t, ok
}

// utilityModel is the model a utility request is about: the one it names,
// or the only loaded model.
func (s *Server) utilityModel(c *gin.Context, model string) (string, bool) {
	if model != "" {
		if err := validateModel(model); err != nil {
			s.fail(c, err)
			return "", false
		}
		return model, true
	}
	sts, err := s.cfg.Service.PS(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return "", false
	}
	if len(sts) != 1 {
		s.fail(c, badRequest("name the model (\"model\" in the body, ?model= for /props): %d models are loaded, and helexa serves many", len(sts)))
		return "", false
	}
	return sts[0].Name, true
}

// tokenize serves POST /tokenize.
func (s *Server) tokenize(c *gin.Context) {
	var req TokenizeRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	t, ok := s.texter(c)
	if !ok {
		return
	}
	model, ok := s.utilityModel(c, req.Model)
	if !ok {
		return
	}
	pieces, err := t.Tokenize(c.Request.Context(), engine.TokenizeRequest{Model: model, Text: req.Content,
		AddSpecial: req.AddSpecial, ParseSpecial: req.ParseSpecial == nil || *req.ParseSpecial})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	if !req.WithPieces {
		ids := make([]int32, len(pieces))
		for i, p := range pieces {
			ids[i] = p.ID
		}
		c.JSON(http.StatusOK, gin.H{"tokens": ids})
		return
	}
	out := make([]TokenPiece, len(pieces))
	for i, p := range pieces {
		out[i] = TokenPiece{ID: p.ID, Piece: p.Text}
		if !utf8.ValidString(p.Text) {
			out[i].Piece = byteInts(p.Text)
		}
	}
	c.JSON(http.StatusOK, gin.H{"tokens": out})
}

// detokenize serves POST /detokenize.
func (s *Server) detokenize(c *gin.Context) {
	var req DetokenizeRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	t, ok := s.texter(c)
	if !ok {
		return
	}
	model, ok := s.utilityModel(c, req.Model)
	if !ok {
		return
	}
	text, err := t.Detokenize(c.Request.Context(), model, req.Tokens)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"content": text})
}

// applyTemplate serves POST /apply-template: an OpenAI chat body rendered
// with the model's chat template, as /v1/chat/completions would.
func (s *Server) applyTemplate(c *gin.Context) {
	var req ChatCompletionRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	t, ok := s.texter(c)
	if !ok {
		return
	}
	model, ok := s.utilityModel(c, req.Model)
	if !ok {
		return
	}
	req.Model = model
	rreq, err := req.toRunner()
	if err != nil {
		s.fail(c, err)
		return
	}
	prompt, err := t.ApplyTemplate(c.Request.Context(), rreq)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"prompt": prompt})
}

// Props is the GET /props response: llama-server's fields for the model
// (loading it if needed).
type Props struct {
	DefaultGenerationSettings struct {
		NCtx   int            `json:"n_ctx"`
		Params map[string]any `json:"params"`
	} `json:"default_generation_settings"`
	ModelPath    string          `json:"model_path"`
	ChatTemplate string          `json:"chat_template"`
	Modalities   map[string]bool `json:"modalities"`
	BuildInfo    string          `json:"build_info"`
	// Model is helexa's: the model described.
	Model string `json:"model"`
}

// props serves GET /props[?model=].
func (s *Server) props(c *gin.Context) {
	model, ok := s.utilityModel(c, c.Query("model"))
	if !ok {
		return
	}
	d, err := s.cfg.Service.Show(c.Request.Context(), model)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	var out Props
	out.DefaultGenerationSettings.NCtx = d.Context
	out.DefaultGenerationSettings.Params = map[string]any{"temperature": defaultTemperature, "n_predict": -1}
	out.ModelPath, out.ChatTemplate, out.Model = d.Path, d.Template, model
	out.Modalities = map[string]bool{"vision": false, "audio": false}
	out.BuildInfo = "helexa " + firstNonEmpty(s.cfg.Version, "dev")
	c.JSON(http.StatusOK, out)
}
