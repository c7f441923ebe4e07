package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// completions serves POST /v1/completions. A list of prompts gets one
// choice each, generated in order.
func (s *Server) completions(c *gin.Context) {
	var req CompletionRequest
	rreq, ok := bindRunner[engine.CompletionRequest](s, c, &req)
	if !ok {
		return
	}
	base := Completion{ID: newID("cmpl-"), Object: "text_completion", Created: s.cfg.Now().Unix(), Model: req.Model}
	if req.Stream {
		s.streamCompletion(c, &req, req.each(rreq), base)
		return
	}
	out := base
	var total engine.Usage
	for i, one := range req.each(rreq) {
		ch, res, err := s.completeOne(c, one, base.ID)
		if err != nil {
			s.failOrGone(c, err)
			return
		}
		ch.Index = i
		out.Choices = append(out.Choices, ch)
		total = addUsage(total, res.Usage)
	}
	s.metrics.usage(req.Model, total)
	out.Usage = ptr(usage(total))
	out.Timings = timings(total)
	out.Options = served(total)
	c.JSON(http.StatusOK, out)
}

// completeOne generates one choice.
func (s *Server) completeOne(c *gin.Context, rreq engine.CompletionRequest, id string) (CompletionChoice, engine.Result, error) {
	var text strings.Builder
	var lps *LegacyLogprobs
	if rreq.Options.Logprobs {
		lps = &LegacyLogprobs{}
	}
	res, err := s.cfg.Service.Complete(engine.WithRequestID(c.Request.Context(), id), rreq, func(d engine.Delta) error {
		if lps != nil {
			appendLegacy(lps, d.Tokens, text.Len())
		}
		text.WriteString(d.Reasoning)
		text.WriteString(d.Content)
		return nil
	})
	return CompletionChoice{Text: text.String(), Logprobs: lps, FinishReason: ptr(res.FinishReason)}, res, err
}

// addUsage sums the usage of several choices (timings add up: they ran
// one after the other).
func addUsage(a, b engine.Usage) engine.Usage {
	a.PromptTokens += b.PromptTokens
	a.CachedTokens += b.CachedTokens
	a.CompletionTokens += b.CompletionTokens
	a.PrefillDuration += b.PrefillDuration
	a.DecodeDuration += b.DecodeDuration
	a.LoadDuration += b.LoadDuration
	a.Context = max(a.Context, b.Context)
	return a
}

// streamCompletion streams a completion as SSE chunks, choice by choice.
func (s *Server) streamCompletion(c *gin.Context, req *CompletionRequest, reqs []engine.CompletionRequest, base Completion) {
	w := s.newSSEWriter(c)
	var total engine.Usage
	for i, rreq := range reqs {
		offset := 0
		res, err := s.cfg.Service.Complete(engine.WithRequestID(c.Request.Context(), base.ID), rreq, func(d engine.Delta) error {
			ch := CompletionChoice{Index: i, Text: d.Reasoning + d.Content}
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
		total = addUsage(total, res.Usage)
		last := base
		last.Choices = []CompletionChoice{{Index: i, FinishReason: ptr(res.FinishReason)}}
		if err := w.send(last); err != nil {
			return
		}
	}
	s.metrics.usage(req.Model, total)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		final := base
		final.Choices = []CompletionChoice{}
		final.Usage = ptr(usage(total))
		final.Timings = timings(total)
		final.Options = served(total)
		if err := w.send(final); err != nil {
			return
		}
	}
	_ = w.done()
}

// appendLegacy adds tokens to the legacy completions logprobs object.
func appendLegacy(lp *LegacyLogprobs, toks []engine.TokenInfo, offset int) {
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
