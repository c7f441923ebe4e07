package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
)

// wireParams converts engine options into the shared request fields.
func wireParams(o engine.Options) GenerationParams {
	s := o.Sampling
	p := GenerationParams{
		Temperature:   ptr(max(s.Temperature, 0)),
		Seed:          ptr(int64(s.Seed)),
		Stop:          o.Stop,
		Stream:        true,
		StreamOptions: &StreamOptions{IncludeUsage: true},
		KeepAlive:     wireDuration(o.KeepAlive),
		NumCtx:        o.NumCtx,
		ReturnTokens:  true,
		IgnoreEOS:     o.IgnoreEOS,
	}
	nonZero := func(v float32) *float32 {
		if v == 0 {
			return nil
		}
		return ptr(v)
	}
	p.TopP, p.MinP, p.RepeatPenalty = nonZero(s.TopP), nonZero(s.MinP), nonZero(s.RepeatPenalty)
	p.PresencePenalty, p.FrequencyPenalty = nonZero(s.PresencePenalty), nonZero(s.FrequencyPenalty)
	if s.TopK != 0 {
		p.TopK = ptr(s.TopK)
	}
	if s.RepeatLastN != 0 {
		p.RepeatLastN = ptr(s.RepeatLastN)
	}
	if o.MaxTokens > 0 {
		p.MaxTokens = ptr(o.MaxTokens)
	}
	if len(s.LogitBias) > 0 {
		p.LogitBias = make(map[string]float32, len(s.LogitBias))
		for id, b := range s.LogitBias {
			p.LogitBias[strconv.Itoa(int(id))] = b
		}
	}
	return p
}

// Chat streams a chat turn from the daemon.
func (c *Client) Chat(ctx context.Context, req engine.ChatRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	body := ChatCompletionRequest{
		Model: req.Model, Messages: req.Messages, GenerationParams: wireParams(req.Options),
		Tools: req.Tools, ToolChoice: wireToolChoice(req.ToolChoice), ChatTemplateKwargs: req.TemplateKwargs,
	}
	if req.Options.Logprobs || req.Options.TopLogprobs > 0 {
		body.Logprobs = ptr(true)
		if req.Options.TopLogprobs > 0 {
			body.TopLogprobs = ptr(req.Options.TopLogprobs)
		}
	}
	if req.Options.JSONMode {
		body.ResponseFormat = &ResponseFormat{Type: "json_object"}
	}
	return c.stream(ctx, "/v1/chat/completions", body, func(data []byte, st *streamState) error {
		var ch ChatCompletionChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return fmt.Errorf("decoding chunk: %w", err)
		}
		st.note(ch.Usage, ch.Timings)
		for _, choice := range ch.Choices {
			if choice.FinishReason != nil {
				st.finish = *choice.FinishReason
			}
			d := engine.Delta{Reasoning: choice.Delta.ReasoningContent, Tokens: tokensFrom(choice.Logprobs, choice.Delta.TokenIDs),
				ToolCalls: runnerToolCalls(choice.Delta.ToolCalls)}
			if choice.Delta.Content != nil {
				d.Content = *choice.Delta.Content
			}
			if err := st.emit(d, onDelta); err != nil {
				return err
			}
		}
		return nil
	})
}

// wireToolChoice encodes a tool choice as OpenAI's tool_choice (nil: the
// default, "auto").
func wireToolChoice(tc engine.ToolChoice) json.RawMessage {
	switch {
	case tc.Name != "":
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}})
		return b
	case tc.Required:
		return json.RawMessage(`"required"`)
	}
	return nil
}

// Complete streams a raw-prompt completion from the daemon.
func (c *Client) Complete(ctx context.Context, req engine.CompletionRequest, onDelta func(engine.Delta) error) (engine.Result, error) {
	body := CompletionRequest{Model: req.Model, Prompt: TextPrompt(req.Prompt), GenerationParams: wireParams(req.Options), AddSpecial: ptr(req.AddSpecial)}
	if req.Options.Logprobs || req.Options.TopLogprobs > 0 {
		body.Logprobs = ptr(req.Options.TopLogprobs)
	}
	if req.Options.JSONMode {
		return engine.Result{}, engine.Errorf(engine.KindBadRequest, "JSON mode is only available for chat requests")
	}
	return c.stream(ctx, "/v1/completions", body, func(data []byte, st *streamState) error {
		var ch Completion
		if err := json.Unmarshal(data, &ch); err != nil {
			return fmt.Errorf("decoding chunk: %w", err)
		}
		st.note(ch.Usage, ch.Timings)
		for _, choice := range ch.Choices {
			if choice.FinishReason != nil {
				st.finish = *choice.FinishReason
			}
			d := engine.Delta{Content: choice.Text, Tokens: legacyTokens(choice.Logprobs, choice.TokenIDs)}
			if err := st.emit(d, onDelta); err != nil {
				return err
			}
		}
		return nil
	})
}

// streamState collects what a stream reports besides its deltas.
type streamState struct {
	finish string
	usage  engine.Usage
}

func (st *streamState) note(u *Usage, t *Timings) {
	if u != nil {
		st.usage.PromptTokens, st.usage.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if u.PromptTokensDetails != nil {
			st.usage.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
	}
	if t != nil {
		ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
		st.usage.PrefillDuration, st.usage.DecodeDuration, st.usage.LoadDuration = ms(t.PromptMS), ms(t.PredictedMS), ms(t.LoadMS)
	}
}

// emit passes a delta on unless it is empty (the role chunk, the finish chunk).
func (st *streamState) emit(d engine.Delta, onDelta func(engine.Delta) error) error {
	if d.Content == "" && d.Reasoning == "" && len(d.Tokens) == 0 && len(d.ToolCalls) == 0 {
		return nil
	}
	return onDelta(d)
}

// stream posts body and feeds every SSE event to handle until [DONE].
func (c *Client) stream(ctx context.Context, path string, body any, handle func([]byte, *streamState) error) (engine.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return engine.Result{}, err
	}
	defer resp.Body.Close()
	var st streamState
	err = readSSE(resp.Body, func(data []byte) error {
		if e, ok := eventError(data); ok {
			return e
		}
		return handle(data, &st)
	})
	switch {
	case errors.Is(err, errDone):
		return engine.Result{FinishReason: st.finish, Usage: st.usage}, nil
	case err == nil:
		if ctx.Err() != nil {
			return engine.Result{}, ctx.Err()
		}
		return engine.Result{}, engine.Errorf(engine.KindInternal, "the daemon ended the stream early (no [DONE])")
	default:
		if ctx.Err() != nil {
			return engine.Result{}, ctx.Err()
		}
		return engine.Result{}, err
	}
}

// errDone marks the end of a stream.
var errDone = errors.New("stream done")

// readSSE calls fn with the payload of every `data:` line until fn fails,
// [DONE] arrives (errDone) or the body ends (nil).
func readSSE(r io.Reader, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
				data = bytes.TrimSpace(data)
				if bytes.Equal(data, []byte("[DONE]")) {
					return errDone
				}
				if ferr := fn(data); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading stream: %w", err)
		}
	}
}

// eventError recognizes an `{"error": ...}` event.
func eventError(data []byte) (error, bool) {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return nil, false
	}
	var er struct {
		Error *ErrorBody `json:"error"`
	}
	if json.Unmarshal(data, &er) != nil || er.Error == nil {
		return nil, false
	}
	return &engine.Error{Kind: kindOf(0, er.Error.Code), Msg: er.Error.Message}, true
}

// tokensFrom rebuilds token infos from chat logprobs or bare ids.
func tokensFrom(lp *ChoiceLogprobs, ids []int32) []engine.TokenInfo {
	if lp != nil && len(lp.Content) > 0 {
		out := make([]engine.TokenInfo, len(lp.Content))
		for i, t := range lp.Content {
			ti := engine.TokenInfo{ID: t.ID, Text: t.Token, Logprob: t.Logprob}
			for _, alt := range t.TopLogprobs {
				ti.Top = append(ti.Top, executor.TokenLogprob{Token: alt.ID, Logprob: alt.Logprob})
				ti.TopText = append(ti.TopText, alt.Token)
			}
			out[i] = ti
		}
		return out
	}
	return idsOnly(ids)
}

// legacyTokens rebuilds token infos from completion logprobs or bare ids.
func legacyTokens(lp *LegacyLogprobs, ids []int32) []engine.TokenInfo {
	if lp == nil || len(lp.Tokens) == 0 {
		return idsOnly(ids)
	}
	out := make([]engine.TokenInfo, len(lp.Tokens))
	for i, text := range lp.Tokens {
		out[i] = engine.TokenInfo{Text: text}
		if i < len(lp.TokenLogprobs) {
			out[i].Logprob = lp.TokenLogprobs[i]
		}
		if i < len(ids) {
			out[i].ID = ids[i]
		}
	}
	return out
}

func idsOnly(ids []int32) []engine.TokenInfo {
	if len(ids) == 0 {
		return nil
	}
	out := make([]engine.TokenInfo, len(ids))
	for i, id := range ids {
		out[i] = engine.TokenInfo{ID: id}
	}
	return out
}

// runnerToolCalls converts streamed tool calls (each sent whole) into the
// engine's form.
func runnerToolCalls(calls []ToolCallDelta) []engine.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]engine.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = engine.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
	}
	return out
}
