package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// chatCompletions serves POST /v1/chat/completions: it encodes the
// engine's deltas (reasoning, content, tool calls) as an OpenAI chat
// completion, streamed or not.
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
	var calls toolCalls
	var lps *ChoiceLogprobs
	if rreq.Options.Logprobs {
		lps = &ChoiceLogprobs{Content: []TokenLogprob{}}
	}
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), base.ID), rreq, func(d engine.Delta) error {
		content.WriteString(d.Content)
		reasoning.WriteString(d.Reasoning)
		calls.add(d.ToolCalls)
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
			Message:      ChatMessage{Role: "assistant", Content: content.String(), ReasoningContent: reasoning.String(), ToolCalls: calls.whole()},
			Logprobs:     lps,
			FinishReason: res.FinishReason,
		}},
		Usage:   usage(res.Usage),
		Timings: timings(res.Usage),
		Options: served(res.Usage),
	})
}

// streamChat streams a chat completion as SSE chunks, one per engine delta
// (each tool call whole, in a tool_calls delta).
func (s *Server) streamChat(c *gin.Context, req *ChatCompletionRequest, rreq engine.ChatRequest, base ChatCompletionChunk) {
	w := s.newSSEWriter(c)
	var calls toolCalls
	chunk := func(d ChunkDelta, lp *ChoiceLogprobs, finish *string) ChatCompletionChunk {
		ch := base
		ch.Choices = []ChunkChoice{{Delta: d, Logprobs: lp, FinishReason: finish}}
		return ch
	}
	sendRole := func() error {
		return w.send(chunk(ChunkDelta{Role: "assistant", Content: ptr("")}, nil, nil))
	}
	res, err := s.cfg.Service.Chat(engine.WithRequestID(c.Request.Context(), base.ID), rreq, func(d engine.Delta) error {
		if !w.started {
			if err := sendRole(); err != nil {
				return err
			}
		}
		cd := ChunkDelta{ReasoningContent: d.Reasoning, ToolCalls: calls.add(d.ToolCalls)}
		if d.Content != "" || (d.Reasoning == "" && len(d.ToolCalls) == 0) {
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
		final.Options = served(res.Usage)
		if err := w.send(final); err != nil {
			return
		}
	}
	_ = w.done()
}

// toolCalls numbers a response's tool calls in the order they come.
type toolCalls struct{ list []ToolCallDelta }

// add encodes calls, indexed after the ones before them.
func (tc *toolCalls) add(calls []engine.ToolCall) []ToolCallDelta {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCallDelta, 0, len(calls))
	for _, c := range calls {
		out = append(out, ToolCallDelta{Index: len(tc.list) + len(out), ToolCall: ToolCall{
			ID: c.ID, Type: "function",
			Function: FunctionCall{Name: c.Name, Arguments: c.Arguments},
		}})
	}
	tc.list = append(tc.list, out...)
	return out
}

// whole returns every call, for a non-streamed message.
func (tc *toolCalls) whole() []ToolCall {
	var out []ToolCall
	for _, d := range tc.list {
		out = append(out, d.ToolCall)
	}
	return out
}
