package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/runner"
)

// completions serves POST /v1/completions.
func (s *Server) completions(c *gin.Context) {
	var req CompletionRequest
	rreq, ok := bindRunner[runner.CompletionRequest](s, c, &req)
	if !ok {
		return
	}
	base := Completion{ID: newID("cmpl-"), Object: "text_completion", Created: s.cfg.Now().Unix(), Model: req.Model}
	if req.Stream {
		s.streamCompletion(c, &req, rreq, base)
		return
	}
	var text strings.Builder
	var lps *LegacyLogprobs
	if rreq.Options.Logprobs {
		lps = &LegacyLogprobs{}
	}
	res, err := s.cfg.Service.Complete(runner.WithRequestID(c.Request.Context(), base.ID), rreq, func(d runner.Delta) error {
		if lps != nil {
			appendLegacy(lps, d.Tokens, text.Len())
		}
		text.WriteString(d.Reasoning)
		text.WriteString(d.Content)
		return nil
	})
	if err != nil {
		s.failOrGone(c, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	out := base
	out.Choices = []CompletionChoice{{Text: text.String(), Logprobs: lps, FinishReason: ptr(res.FinishReason)}}
	out.Usage = ptr(usage(res.Usage))
	out.Timings = timings(res.Usage)
	out.Options = served(res.Usage)
	c.JSON(http.StatusOK, out)
}

// streamCompletion streams a completion as SSE chunks.
func (s *Server) streamCompletion(c *gin.Context, req *CompletionRequest, rreq runner.CompletionRequest, base Completion) {
	w := s.newSSEWriter(c)
	offset := 0
	res, err := s.cfg.Service.Complete(runner.WithRequestID(c.Request.Context(), base.ID), rreq, func(d runner.Delta) error {
		ch := CompletionChoice{Text: d.Reasoning + d.Content}
		if rreq.Options.Logprobs {
			ch.Logprobs = &LegacyLogprobs{}
			appendLegacy(ch.Logprobs, d.Tokens, offset)
		}
		if req.ReturnTokens {
			ch.TokenIDs = tokenIDs(d.Tokens)
		}
		offset += len(ch.Text)
		out := base
		out.Choices = []CompletionChoice{ch}
		return w.send(out)
	})
	if err != nil {
		s.finishStream(c, w, err)
		return
	}
	s.metrics.usage(req.Model, res.Usage)
	last := base
	last.Choices = []CompletionChoice{{FinishReason: ptr(res.FinishReason)}}
	if err := w.send(last); err != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		final := base
		final.Choices = []CompletionChoice{}
		final.Usage = ptr(usage(res.Usage))
		final.Timings = timings(res.Usage)
		final.Options = served(res.Usage)
		if err := w.send(final); err != nil {
			return
		}
	}
	_ = w.done()
}

// appendLegacy adds tokens to the legacy completions logprobs object.
func appendLegacy(lp *LegacyLogprobs, toks []runner.TokenInfo, offset int) {
	for _, t := range toks {
		lp.Tokens = append(lp.Tokens, t.Text)
		lp.TokenLogprobs = append(lp.TokenLogprobs, t.Logprob)
		lp.TextOffset = append(lp.TextOffset, offset)
		offset += len(t.Text)
		top := make(map[string]float32, len(t.Top))
		for i, alt := range t.Top {
			if i < len(t.TopText) {
				top[t.TopText[i]] = alt.Logprob
			}
		}
		lp.TopLogprobs = append(lp.TopLogprobs, top)
	}
}
