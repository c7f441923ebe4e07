package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// The OpenAI Responses API (POST /v1/responses, GET and DELETE
// /v1/responses/{id}), translated onto the chat path: the request becomes
// an engine.ChatRequest (responses_request.go, responses_input.go), the
// engine's deltas become output items and events (responses_encode.go),
// and finished responses are kept in the Server's responseStore for GET and
// previous_response_id.

// createResponse serves POST /v1/responses.
func (s *Server) createResponse(c *gin.Context) {
	var req ResponsesRequest
	if !s.bindOpenAI(c, &req) {
		return
	}
	var prev []chatTurn
	if req.PreviousResponseID != "" {
		e, ok := s.responses.get(req.PreviousResponseID)
		if !ok {
			s.fail(c, badRequest("previous_response_id %q is not stored: it is unknown, expired, deleted or was created with store: false (helexa keeps responses in memory for %v, until restart)",
				req.PreviousResponseID, s.responses.ttl))
			return
		}
		prev = e.history
	}
	p, err := req.plan(prev)
	if err != nil {
		s.fail(c, err)
		return
	}
	resp := req.skeleton(newID("resp_"), s.cfg.Now().Unix(), p.store)
	if req.Stream {
		s.streamResponse(c, &req, p, resp)
		return
	}
	enc := newResponseEncoder(resp, nil)
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), resp.ID), p.chat, enc.delta)
	if err == nil {
		err = enc.finish(res)
	}
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	s.keepResponse(resp, p)
	c.JSON(http.StatusOK, resp)
}

// streamResponse streams a response as Responses events. Nothing is sent
// before the first output, so an error before it (a bad model, a prompt
// too long) is a plain HTTP error; one after it ends the stream with
// response.failed. A client that goes away cancels the generation.
func (s *Server) streamResponse(c *gin.Context, req *ResponsesRequest, p responsePlan, resp *Response) {
	w := s.newSSEWriter(c)
	enc := newResponseEncoder(resp, w.sendNamed)
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), resp.ID), p.chat, enc.delta)
	if err == nil {
		s.metrics.usage(req.Model, res.Usage)
		err = enc.finish(res)
		if err == nil {
			s.keepResponse(resp, p)
			return
		}
	}
	if !w.started || c.Request.Context().Err() != nil {
		s.finishStream(c, w, err)
		return
	}
	s.metrics.streamError()
	_, body := s.clientError(c, err)
	s.log.Warn("stream failed", "path", c.Request.URL.Path, "err", err)
	_ = enc.fail(body.Error)
}

// keepResponse stores a finished response (unless the request said
// store: false) with its conversation: the history and the response's
// output as one assistant message.
func (s *Server) keepResponse(resp *Response, p responsePlan) {
	if !p.store {
		return
	}
	history := append(append([]chatTurn(nil), p.history...), outputTurn(resp.Output))
	if !s.responses.put(resp, history) {
		s.log.Warn("response too large to keep for previous_response_id", "id", resp.ID)
	}
}

// outputTurn is a response's output as one assistant chat message.
func outputTurn(items []OutputItem) chatTurn {
	t := chatTurn{Role: "assistant"}
	for _, it := range items {
		switch it.Type {
		case itemReasoning:
			t.ReasoningContent = joinNonEmpty(t.ReasoningContent, it.Content[0].Text)
		case itemMessage:
			t.Content = joinNonEmpty(t.Content, it.Content[0].Text)
		case itemFunctionCall:
			t.ToolCalls = append(t.ToolCalls, ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: *it.Arguments}})
		}
	}
	return t
}

// getResponse serves GET /v1/responses/{id}.
func (s *Server) getResponse(c *gin.Context) {
	id := c.Param("id")
	if c.Query("stream") == "true" {
		s.fail(c, badRequest("stream = true is not supported on GET /v1/responses/{id}: helexa returns the finished response"))
		return
	}
	e, ok := s.responses.get(id)
	if !ok {
		s.fail(c, notStored(id))
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", e.resp)
}

// deleteResponse serves DELETE /v1/responses/{id}.
func (s *Server) deleteResponse(c *gin.Context) {
	id := c.Param("id")
	if !s.responses.remove(id) {
		s.fail(c, notStored(id))
		return
	}
	c.JSON(http.StatusOK, DeletedResponse{ID: id, Object: "response.deleted", Deleted: true})
}

func notStored(id string) error {
	return engine.Errorf(engine.KindNotFound, "response %q is not stored: it is unknown, expired, deleted, or was created with store: false", id)
}
