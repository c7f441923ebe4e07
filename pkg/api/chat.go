package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/runner"
)

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(c *gin.Context) {
	var req ChatCompletionRequest
	if err := decodeStrict(c.Request.Body, &req); err != nil {
		s.fail(c, err)
		return
	}
	rreq, err := req.toRunner()
	if err != nil {
		s.fail(c, err)
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
	res, err := s.cfg.Service.Chat(c.Request.Context(), rreq, func(d runner.Delta) error {
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
	c.JSON(http.StatusOK, ChatCompletion{
		ID: base.ID, Object: "chat.completion", Created: base.Created, Model: req.Model,
		Choices: []ChatChoice{{
			Message:      ChatMessage{Role: "assistant", Content: content.String(), ReasoningContent: reasoning.String()},
			Logprobs:     lps,
			FinishReason: res.FinishReason,
		}},
		Usage:   usage(res.Usage),
		Timings: timings(res.Usage),
	})
}

// streamChat streams a chat completion as SSE chunks.
func (s *Server) streamChat(c *gin.Context, req *ChatCompletionRequest, rreq runner.ChatRequest, base ChatCompletionChunk) {
	w := &sseWriter{c: c}
	chunk := func(d ChunkDelta, lp *ChoiceLogprobs, finish *string) ChatCompletionChunk {
		ch := base
		ch.Choices = []ChunkChoice{{Delta: d, Logprobs: lp, FinishReason: finish}}
		return ch
	}
	sendRole := func() error {
		return w.send(chunk(ChunkDelta{Role: "assistant", Content: ptr("")}, nil, nil))
	}
	res, err := s.cfg.Service.Chat(c.Request.Context(), rreq, func(d runner.Delta) error {
		if !w.started {
			if err := sendRole(); err != nil {
				return err
			}
		}
		cd := ChunkDelta{ReasoningContent: d.Reasoning}
		if d.Content != "" || d.Reasoning == "" {
			cd.Content = ptr(d.Content)
		}
		if req.ReturnTokens {
			cd.TokenIDs = tokenIDs(d.Tokens)
		}
		var lp *ChoiceLogprobs
		if rreq.Options.Logprobs {
			lp = chatLogprobs(d.Tokens)
		}
		return w.send(chunk(cd, lp, nil))
	})
	if err == nil && !w.started {
		err = sendRole()
	}
	if err != nil {
		s.finishStream(c, w, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	if err := w.send(chunk(ChunkDelta{}, nil, ptr(res.FinishReason))); err != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		final := base
		final.Choices = []ChunkChoice{}
		final.Usage = ptr(usage(res.Usage))
		final.Timings = timings(res.Usage)
		if err := w.send(final); err != nil {
			return
		}
	}
	_ = w.done()
}
