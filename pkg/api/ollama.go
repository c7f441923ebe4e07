package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// This file serves ollama's generation endpoints, /api/chat and
// /api/generate: a translation of ollama's requests onto engine.Service
// and of the engine's deltas into ollama's NDJSON records.

// ollamaRoutes registers ollama's endpoints that helexa had no route for
// (/api/ps, /api/show and /api/pull are registered with helexa's own).
func (s *Server) ollamaRoutes(r gin.IRoutes) {
	r.POST("/api/chat", s.ollamaChat)
	r.POST("/api/generate", s.ollamaGenerate)
	r.GET("/api/tags", s.ollamaTags)
	r.POST("/api/embed", s.ollamaEmbed)
	r.POST("/api/embeddings", s.ollamaEmbeddings)
	r.DELETE("/api/delete", s.ollamaDelete)
	r.GET("/api/version", s.ollamaVersion)
}

// isOllamaRoute reports a path whose errors take ollama's shape: every
// /api/ route (ollama's, and helexa's own beside them).
func isOllamaRoute(path string) bool { return strings.HasPrefix(path, "/api/") }

// ndjsonWriter writes newline-delimited JSON records, flushing each, under
// the same header and deadline rules as every stream (streamOut).
type ndjsonWriter struct{ streamOut }

func (s *Server) newNDJSONWriter(c *gin.Context) *ndjsonWriter {
	return &ndjsonWriter{streamOut{c: c, timeout: s.cfg.StreamWriteTimeout}}
}

// send writes v as one JSON line and flushes it.
func (w *ndjsonWriter) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding record: %w", err)
	}
	w.begin("application/x-ndjson")
	if _, err := w.c.Writer.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing record: %w", err)
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("writing record: %w", err)
	}
	return nil
}

// finishNDJSON ends a stream whose generation failed: before any record
// the error is a normal response; after, it is sent as ollama's
// {"error": …} record.
func (s *Server) finishNDJSON(c *gin.Context, w *ndjsonWriter, err error) {
	s.endFailedStream(c, w.started, err, func(_ int, body ErrorResponse) error {
		return w.send(OllamaError{Error: body.Error.Message, Code: body.Error.Code})
	})
}

// streams reports ollama's stream flag (true when left out).
func streams(stream *bool) bool { return stream == nil || *stream }

// ollamaChat serves POST /api/chat.
func (s *Server) ollamaChat(c *gin.Context) {
	var req OllamaChatRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	if len(req.Messages) == 0 && validateModel(req.Model) == nil {
		s.ollamaLoadOnly(c, req.Model, req.KeepAlive, req.Options.NumCtx, func(r OllamaGenerateResponse) any {
			return OllamaChatResponse{Model: r.Model, CreatedAt: r.CreatedAt, Message: OllamaMessage{Role: "assistant"},
				Done: true, DoneReason: r.DoneReason}
		})
		return
	}
	rreq, err := req.toRunner()
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := engine.WithRequestID(c.Request.Context(), newID("chat-"))
	calls := 0 // tool calls streamed so far, for their index
	record := func(d engine.Delta, first int, m *OllamaMetrics) OllamaChatResponse {
		return OllamaChatResponse{Model: req.Model, CreatedAt: s.cfg.Now().UTC(), OllamaMetrics: m,
			Message: OllamaMessage{Role: "assistant", Content: d.Content, Thinking: d.Reasoning, ToolCalls: ollamaToolCalls(d.ToolCalls, first)}}
	}
	s.ollamaAnswer(c, req.Model, streams(req.Stream), func(onDelta func(engine.Delta) error) (engine.Result, error) {
		return s.cfg.Service.Chat(ctx, rreq, onDelta)
	}, ollamaShape{
		piece: func(d engine.Delta) any {
			r := record(d, calls, nil)
			calls += len(d.ToolCalls)
			return r
		},
		final: func(whole engine.Delta, reason string, m *OllamaMetrics) any {
			r := record(whole, 0, m)
			r.Done, r.DoneReason = true, reason
			return r
		},
	})
}

// ollamaGenerate serves POST /api/generate: the prompt as a user turn
// through the chat template (with system before it), or, with raw, as it
// is.
func (s *Server) ollamaGenerate(c *gin.Context) {
	var req OllamaGenerateRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	if req.Prompt == "" && req.System == "" && req.Suffix == "" && len(req.Images) == 0 && validateModel(req.Model) == nil {
		s.ollamaLoadOnly(c, req.Model, req.KeepAlive, req.Options.NumCtx, func(r OllamaGenerateResponse) any { return r })
		return
	}
	g, err := req.toRunner()
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := engine.WithRequestID(c.Request.Context(), newID("gen-"))
	record := func(d engine.Delta) OllamaGenerateResponse {
		return OllamaGenerateResponse{Model: req.Model, CreatedAt: s.cfg.Now().UTC(), Response: d.Content, Thinking: d.Reasoning}
	}
	s.ollamaAnswer(c, req.Model, streams(req.Stream), func(onDelta func(engine.Delta) error) (engine.Result, error) {
		if g.complete != nil {
			return s.cfg.Service.Complete(ctx, *g.complete, func(d engine.Delta) error {
				return onDelta(engine.Delta{Content: d.Reasoning + d.Content})
			})
		}
		return s.cfg.Service.Chat(ctx, *g.chat, onDelta)
	}, ollamaShape{
		piece: func(d engine.Delta) any { return record(d) },
		final: func(whole engine.Delta, reason string, m *OllamaMetrics) any {
			r := record(whole)
			r.Done, r.DoneReason, r.OllamaMetrics = true, reason, m
			return r
		},
	})
}

// ollamaShape makes an endpoint's records: piece one streamed record per
// delta, final the last record (streamed) or the only one (not streamed),
// given the whole output (only when not streamed), ollama's done_reason and
// the counts.
type ollamaShape struct {
	piece func(d engine.Delta) any
	final func(whole engine.Delta, reason string, m *OllamaMetrics) any
}

// ollamaAnswer runs a generation and answers in ollama's shape: streamed
// as NDJSON, a record per delta and a final one, or as one JSON record of
// the whole output.
func (s *Server) ollamaAnswer(c *gin.Context, model string, stream bool, run func(func(engine.Delta) error) (engine.Result, error), sh ollamaShape) {
	start := s.cfg.Now()
	metrics := func(res engine.Result) *OllamaMetrics {
		s.metrics.usage(model, res.Usage)
		return ollamaMetrics(res.Usage, s.cfg.Now().Sub(start).Nanoseconds())
	}
	if stream {
		w := s.newNDJSONWriter(c)
		res, err := run(func(d engine.Delta) error { return w.send(sh.piece(d)) })
		if err != nil {
			s.finishNDJSON(c, w, err)
			return
		}
		_ = w.send(sh.final(engine.Delta{}, doneReason(res.FinishReason), metrics(res)))
		return
	}
	var content, reasoning strings.Builder
	var calls []engine.ToolCall
	res, err := run(func(d engine.Delta) error {
		content.WriteString(d.Content)
		reasoning.WriteString(d.Reasoning)
		calls = append(calls, d.ToolCalls...)
		return nil
	})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	whole := engine.Delta{Content: content.String(), Reasoning: reasoning.String(), ToolCalls: calls}
	c.JSON(http.StatusOK, sh.final(whole, doneReason(res.FinishReason), metrics(res)))
}

// ollamaLoadOnly answers a generate or chat request with nothing to
// generate as ollama does: it loads the model (done_reason "load"), or,
// with keep_alive 0, unloads it ("unload"). shape turns the generate
// record into the endpoint's.
func (s *Server) ollamaLoadOnly(c *gin.Context, model string, keep *Duration, numCtx int, shape func(OllamaGenerateResponse) any) {
	if err := checkNumCtx(numCtx); err != nil {
		s.fail(c, err)
		return
	}
	out := OllamaGenerateResponse{Model: model, Done: true, DoneReason: "load"}
	if keep != nil && keep.Duration == 0 {
		out.DoneReason = "unload"
		if err := s.cfg.Service.Unload(c.Request.Context(), model); err != nil && toRunnerError(err).Kind != engine.KindNotFound {
			s.failOrGone(c, err)
			return
		}
	} else if _, err := s.cfg.Service.Load(c.Request.Context(), engine.LoadRequest{Model: model, NumCtx: numCtx, KeepAlive: durationPtr(keep)}); err != nil {
		s.failOrGone(c, err)
		return
	}
	out.CreatedAt = s.cfg.Now().UTC()
	c.JSON(http.StatusOK, shape(out))
}
