package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(c *gin.Context) {
	var req ChatCompletionRequest
	rreq, ok := bindRunner[engine.ChatRequest](s, c, &req)
	if !ok {
		return
	}
	base := ChatCompletionChunk{ID: newID("chatcmpl-"), Object: "chat.completion.chunk", Created: s.cfg.Now().Unix(), Model: req.Model}
	if req.Stream {
		s.streamChat(c, &req, rreq, base)
		return
	}
	var content, reasoning strings.Builder
	var lps *ChoiceLogprobs
	if rreq.Options.Logprobs {
		lps = &ChoiceLogprobs{Content: []TokenLogprob{}}
	}
	// The model's template (its tool-call format) is read while the
	// generation holds the model.
	var tmpl *string
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), base.ID), rreq, func(d engine.Delta) error {
		if tmpl == nil {
			t := s.toolTemplate(c.Request.Context(), rreq)
			tmpl = &t
		}
		content.WriteString(d.Content)
		reasoning.WriteString(d.Reasoning)
		if lps != nil {
			lps.Content = append(lps.Content, chatLogprobs(d.Tokens).Content...)
		}
		return nil
	})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	tf := newToolFilter(rreq.Tools, req.forced, func() string {
		if tmpl == nil {
			return ""
		}
		return *tmpl
	})
	text, calls := tf.all(content.String())
	c.JSON(http.StatusOK, ChatCompletion{
		ID: base.ID, Object: "chat.completion", Created: base.Created, Model: req.Model,
		Choices: []ChatChoice{{
			Message:      ChatMessage{Role: "assistant", Content: text, ReasoningContent: reasoning.String(), ToolCalls: calls},
			Logprobs:     lps,
			FinishReason: tf.finishReason(res.FinishReason),
		}},
		Usage:   usage(res.Usage),
		Timings: timings(res.Usage),
		Options: served(res.Usage),
	})
}

// streamChat streams a chat completion as SSE chunks. With tools, text
// that may start a tool call is held back until it is decided, and calls
// go out as tool_calls deltas; the tokens (logprobs, token_ids) of held
// text ride along with the next chunk that is sent.
func (s *Server) streamChat(c *gin.Context, req *ChatCompletionRequest, rreq engine.ChatRequest, base ChatCompletionChunk) {
	w := s.newSSEWriter(c)
	tf := newToolFilter(rreq.Tools, req.forced, func() string { return s.toolTemplate(c.Request.Context(), rreq) })
	var held []engine.TokenInfo
	chunk := func(d ChunkDelta, lp *ChoiceLogprobs, finish *string) ChatCompletionChunk {
		ch := base
		ch.Choices = []ChunkChoice{{Delta: d, Logprobs: lp, FinishReason: finish}}
		return ch
	}
	sendRole := func() error {
		return w.send(chunk(ChunkDelta{Role: "assistant", Content: ptr("")}, nil, nil))
	}
	// send writes one delta; final forces a chunk for leftover tokens.
	send := func(content, reasoning string, calls []ToolCallDelta, toks []engine.TokenInfo, final bool) error {
		held = append(held, toks...)
		if content == "" && reasoning == "" && len(calls) == 0 && (!final || len(held) == 0) {
			return nil
		}
		if !w.started {
			if err := sendRole(); err != nil {
				return err
			}
		}
		cd := ChunkDelta{ReasoningContent: reasoning, ToolCalls: calls}
		if content != "" || (reasoning == "" && len(calls) == 0) {
			cd.Content = ptr(content)
		}
		if req.ReturnTokens {
			cd.TokenIDs = tokenIDs(held)
		}
		var lp *ChoiceLogprobs
		if rreq.Options.Logprobs {
			lp = chatLogprobs(held)
		}
		held = nil
		return w.send(chunk(cd, lp, nil))
	}
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), base.ID), rreq, func(d engine.Delta) error {
		content, calls := tf.push(d.Content)
		// Without tools every delta is sent, as it comes.
		return send(content, d.Reasoning, calls, d.Tokens, tf == nil)
	})
	if err == nil {
		content, calls := tf.flush()
		err = send(content, "", calls, nil, true)
	}
	if err == nil && !w.started {
		err = sendRole()
	}
	if err != nil {
		s.finishStream(c, w, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	if err := w.send(chunk(ChunkDelta{}, nil, ptr(tf.finishReason(res.FinishReason)))); err != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		final := base
		final.Choices = []ChunkChoice{}
		final.Usage = ptr(usage(res.Usage))
		final.Timings = timings(res.Usage)
		final.Options = served(res.Usage)
		if err := w.send(final); err != nil {
			return
		}
	}
	_ = w.done()
}
