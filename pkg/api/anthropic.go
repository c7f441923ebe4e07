package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// The Anthropic Messages API: POST /v1/messages and
// /v1/messages/count_tokens. Requests are translated onto the engine's
// chat path (anthropic_request.go) and its deltas encoded as content
// blocks and stream events (anthropic_encode.go); errors on these paths
// take Anthropic's shape (writeError).

// tokenCounter is the engine's token count of a chat request
// (engine.Manager implements it).
type tokenCounter interface {
	CountTokens(ctx context.Context, req engine.ChatRequest) (int, error)
}

// messages serves POST /v1/messages.
func (s *Server) messages(c *gin.Context) {
	var req MessagesRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	rreq, err := req.toEngine(true)
	if err != nil {
		s.fail(c, err)
		return
	}
	msg := MessagesResponse{ID: newID("msg_"), Type: "message", Role: "assistant", Model: req.Model, Content: []MessageBlock{}}
	ctx := engine.WithRequestID(c.Request.Context(), msg.ID)
	if req.Stream {
		s.streamMessages(ctx, c, rreq, msg)
		return
	}
	var enc messageEncoder
	var asm messageAssembler
	res, err := s.cfg.Service.Chat(ctx, rreq, func(d engine.Delta) error {
		asm.apply(enc.delta(d))
		return nil
	})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	asm.apply(enc.end())
	s.metrics.usage(req.Model, res.Usage)
	msg.Content = asm.content()
	msg.StopReason, msg.StopSequence = stopReason(res)
	msg.Usage = anthropicUsage(res.Usage)
	c.JSON(http.StatusOK, msg)
}

// streamMessages streams a message: message_start and a ping once the
// first output is ready (an error before it is a plain error response),
// the content blocks' events, then message_delta (stop reason, usage) and
// message_stop.
func (s *Server) streamMessages(ctx context.Context, c *gin.Context, rreq engine.ChatRequest, msg MessagesResponse) {
	w := s.newSSEWriter(c)
	var enc messageEncoder
	send := func(events ...namedEvent) error {
		for _, ev := range events {
			if err := w.event(ev); err != nil {
				return err
			}
		}
		return nil
	}
	start := func() error {
		return send(namedEvent{"message_start", messageStartEvent{Type: "message_start", Message: msg}},
			namedEvent{"ping", typeOnlyEvent{Type: "ping"}})
	}
	res, err := s.cfg.Service.Chat(ctx, rreq, func(d engine.Delta) error {
		if !w.started {
			if err := start(); err != nil {
				return err
			}
		}
		return send(enc.delta(d)...)
	})
	if err == nil && !w.started {
		err = start()
	}
	if err != nil {
		s.finishMessageStream(c, w, err)
		return
	}
	s.metrics.usage(msg.Model, res.Usage)
	reason, seq := stopReason(res)
	_ = send(append(enc.end(),
		namedEvent{"message_delta", messageDeltaEvent{Type: "message_delta",
			Delta: messageDelta{StopReason: reason, StopSequence: seq}, Usage: anthropicUsage(res.Usage)}},
		namedEvent{"message_stop", typeOnlyEvent{Type: "message_stop"}})...)
}

// finishMessageStream ends a failed stream: before any event as a plain
// error response, after it as an `error` event (unless the client left).
func (s *Server) finishMessageStream(c *gin.Context, w *sseWriter, err error) {
	s.endFailedStream(c, w.started, err, func(status int, body ErrorResponse) error {
		return w.event(namedEvent{"error", anthropicError(status, body.Error)})
	})
}

// countTokens serves POST /v1/messages/count_tokens: the prompt tokens
// the request would take, tools and system included.
func (s *Server) countTokens(c *gin.Context) {
	var req MessagesRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	rreq, err := req.toEngine(false)
	if err != nil {
		s.fail(c, err)
		return
	}
	counter, ok := s.cfg.Service.(tokenCounter)
	if !ok {
		s.writeError(c, http.StatusNotImplemented, ErrorBody{
			Message: "count_tokens needs the daemon's own engine; this server cannot count tokens",
			Type:    "server_error", Code: "not_implemented",
		})
		return
	}
	n, err := counter.CountTokens(c.Request.Context(), rreq)
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	c.JSON(http.StatusOK, CountTokensResponse{InputTokens: n})
}
