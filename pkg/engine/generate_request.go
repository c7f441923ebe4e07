package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/helexa/helexa/pkg/executor"
)

// cancelGrace is how long a cancelled request waits for the scheduler to
// confirm that its sequence is gone (one step, normally) before returning.
const cancelGrace = 10 * time.Second

// maxTopLogprobs caps top_logprobs (OpenAI's limit).
const maxTopLogprobs = 20

// Chat renders the conversation with the model's template and generates.
func (m *Manager) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta) error) (Result, error) {
	t0 := time.Now()
	req, err := applyToolChoice(req)
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	e, loadDur, err := m.acquire(ctx, req.Model, loadWant{numCtx: req.Options.NumCtx})
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	defer m.release(e, req.Options.KeepAlive)
	text, err := renderChat(ctx, e, req)
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	// The rendered template carries its own BOS text when the model wants
	// one; an earlier turn's ids stand for the text they share.
	pt, err := chatPrompt(ctx, e, text)
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	if pt.reused > 0 {
		m.log.Debug("chat prompt continues an earlier turn", "id", requestID(ctx), "model", e.name,
			"prompt_tokens", len(pt.ids), "reused_tokens", pt.reused)
	}
	parse := ParseOptions{Prompt: text}
	if hasTools(req.Tools) {
		parse.Tools, parse.ToolChoice = req.Tools, req.ToolChoice
	}
	tok := e.model.Tokenizer
	return m.generate(ctx, e, genArgs{kind: "chat", prompt: pt.ids, opts: req.Options,
		parse: parse, loadDur: loadDur, t0: t0,
		keep: func(generated []int32) { e.sched.turns.add(pt.extend(tok, generated)) }}, onDelta)
}

// renderChat renders a chat request with its model's template.
func renderChat(ctx context.Context, e *entry, req ChatRequest) (string, error) {
	if e.model.Template == nil {
		return "", Errorf(KindBadRequest,
			"model %q has no chat template; use the completions endpoint with a raw prompt", req.Model)
	}
	if len(req.Messages) == 0 {
		return "", Errorf(KindBadRequest, "messages are empty; send at least one message")
	}
	var text string
	maxBytes := renderBound(e)
	err := guard("rendering the chat template", func() (err error) {
		text, err = e.model.Template.Render(ctx, ChatInput{
			Messages: req.Messages, Tools: req.Tools, AddGenerationPrompt: true, Kwargs: req.TemplateKwargs,
			MaxBytes: maxBytes,
		})
		return err
	})
	if err != nil {
		return "", renderError(e, err, maxBytes)
	}
	return text, nil
}

// guard runs f, turning a panic in it (a bug tripped by this request's
// input) into an internal error that fails only this request.
func guard(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Errorf(KindInternal, "%s failed: panic: %v", what, p)
		}
	}()
	return f()
}

// contextEncoder is implemented by tokenizers that stop once the
// request's context ends (a prompt that takes long to split).
type contextEncoder interface {
	EncodeContext(ctx context.Context, text string, addSpecial, parseSpecial bool) ([]int32, error)
}

// encode tokenizes a prompt; a failure (or a panic) is the request's own.
func encode(ctx context.Context, e *entry, text string, addSpecial bool) ([]int32, error) {
	tok := e.model.Tokenizer
	if err := fitsInBytes(e, tok, text); err != nil {
		return nil, err
	}
	var prompt []int32
	err := guard("tokenizing the prompt", func() (err error) {
		if ce, ok := tok.(contextEncoder); ok {
			prompt, err = ce.EncodeContext(ctx, text, addSpecial, true)
		} else {
			prompt, err = tok.Encode(text, addSpecial, true)
		}
		return err
	})
	if err != nil {
		return nil, inputError(err, "tokenizing the prompt failed")
	}
	return prompt, nil
}

// maxTokenBytes is implemented by tokenizers that know the longest text a
// single token can stand for.
type maxTokenBytes interface {
	MaxTokenBytes() int
}

// fitsInBytes refuses, before tokenizing it, a prompt whose byte length
// alone proves it cannot fit the context (every token covers at most
// MaxTokenBytes bytes), so a huge prompt costs no tokenizer memory.
func fitsInBytes(e *entry, tok Tokenizer, text string) error {
	mt, ok := tok.(maxTokenBytes)
	if !ok {
		return nil
	}
	per, nctx := mt.MaxTokenBytes(), e.sched.info.NCtx
	if per <= 0 || nctx <= 0 || len(text) <= per*nctx {
		return nil
	}
	return Errorf(KindContextLength, "the prompt is %d bytes: at least %d tokens (no token of this model covers more than %d bytes), more than model %q's context of %d tokens; shorten the prompt",
		len(text), (len(text)+per-1)/per, per, e.name, nctx)
}

// inputError classifies a template or tokenizer failure: the request's
// input is at fault (400) unless guard already classified a panic.
func inputError(err error, msg string) error {
	var re *Error
	if errors.As(err, &re) {
		return err
	}
	return &Error{Kind: KindBadRequest, Msg: msg, Err: err}
}

// Complete generates a continuation of a raw prompt.
func (m *Manager) Complete(ctx context.Context, req CompletionRequest, onDelta func(Delta) error) (Result, error) {
	t0 := time.Now()
	e, loadDur, err := m.acquire(ctx, req.Model, loadWant{numCtx: req.Options.NumCtx})
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	defer m.release(e, req.Options.KeepAlive)
	prompt, err := completionPrompt(ctx, e, req)
	if err != nil {
		return m.refused(ctx, req.Model, t0, err)
	}
	return m.generate(ctx, e, genArgs{kind: "completion", prompt: prompt, opts: req.Options, loadDur: loadDur, t0: t0}, onDelta)
}

// completionPrompt tokenizes a completion's prompt, or checks the token
// ids it came as.
func completionPrompt(ctx context.Context, e *entry, req CompletionRequest) ([]int32, error) {
	if len(req.Tokens) == 0 {
		return encode(ctx, e, req.Prompt, req.AddSpecial)
	}
	n := e.model.Tokenizer.VocabSize()
	for i, id := range req.Tokens {
		if id < 0 || int(id) >= n {
			return nil, Errorf(KindBadRequest, "prompt token %d (position %d) is outside model %q's vocabulary of %d tokens", id, i, e.name, n)
		}
	}
	return append([]int32(nil), req.Tokens...), nil
}

// hasTools reports a tools array with at least one entry.
func hasTools(tools json.RawMessage) bool {
	var list []json.RawMessage
	return json.Unmarshal(tools, &list) == nil && len(list) > 0
}

type genArgs struct {
	kind    string
	prompt  []int32
	opts    Options
	parse   ParseOptions // how the model's output format parses the text
	loadDur time.Duration
	t0      time.Time
	numCtx  int                // the context of the model that serves the request
	embed   executor.EmbedMode // an embedding: prefill only, then the pooled hidden state
	// keep, when set, is given the generated ids of a request that ran
	// to its end (a chat's turn, kept for the next one).
	keep func(generated []int32)
}

// generate runs pre-flight, hands the request to the model's scheduler and
// relays its deltas to onDelta.
func (m *Manager) generate(ctx context.Context, e *entry, a genArgs, onDelta func(Delta) error) (Result, error) {
	id := requestID(ctx)
	a.numCtx = e.sched.info.NCtx
	if err := m.preflight(e, a.prompt, a.opts); err != nil {
		return m.refused(ctx, e.name, a.t0, err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &request{
		id: id, ctx: rctx, prompt: a.prompt, opts: a.opts, embed: a.embed,
		gen: newGeneration(e.model, a.opts, a.parse),
		out: newOutbox(),
	}
	m.log.Info("request started", "id", id, "model", e.name, "kind", a.kind,
		"prompt_tokens", len(a.prompt), "max_tokens", a.opts.MaxTokens)
	if err := e.sched.submit(r); err != nil {
		return m.finished(r, e.name, a, Result{Usage: Usage{PromptTokens: len(a.prompt)}}, err)
	}
	res, ended, err := m.relay(ctx, r, cancel, onDelta)
	if ended && a.keep != nil {
		a.keep(r.generated)
	}
	return m.finished(r, e.name, a, res, err)
}

// relay passes the scheduler's events to onDelta until the final one;
// ended reports that the final one came (not the grace period's end). The
// deltas it could not pass on go to the result's Undelivered.
func (m *Manager) relay(ctx context.Context, r *request, cancel context.CancelFunc, onDelta func(Delta) error) (res Result, ended bool, err error) {
	var cbErr error
	var grace <-chan time.Time
	var undelivered *Delta
	for {
		select {
		case <-r.out.notify:
		case <-ctx.Done():
			if grace == nil {
				t := time.NewTimer(cancelGrace)
				defer t.Stop()
				grace = t.C
			}
			select {
			case <-r.out.notify:
			case <-grace:
				return Result{FinishReason: "cancelled", Usage: Usage{PromptTokens: len(r.prompt)}}, false, ctx.Err()
			}
		}
		for _, ev := range r.out.take() {
			if ev.done {
				switch {
				case cbErr != nil:
					ev.err = cbErr
				case ev.err == nil && ctx.Err() != nil:
					// The caller gave up before it saw the end: its
					// request is cancelled even if generation won the race.
					ev.res.FinishReason, ev.err = "cancelled", ctx.Err()
				}
				if undelivered != nil {
					ev.res.Undelivered = *undelivered
				}
				r.generated = ev.generated
				return ev.res, true, ev.err
			}
			if onDelta == nil {
				continue
			}
			if cbErr != nil || ctx.Err() != nil {
				undelivered = merge(undelivered, ev.delta)
				continue
			}
			if err := onDelta(*ev.delta); err != nil {
				cbErr = err
				undelivered = merge(undelivered, ev.delta)
				cancel()
			}
		}
	}
}

// preflight refuses, before any compute, a request that cannot fit.
func (m *Manager) preflight(e *entry, prompt []int32, opts Options) error {
	info := e.sched.info
	switch {
	case len(prompt) == 0:
		return Errorf(KindBadRequest, "the prompt is empty")
	case opts.MaxTokens < 0:
		return Errorf(KindBadRequest, "max_tokens is %d; it must be positive (or 0 for no limit)", opts.MaxTokens)
	case opts.TopLogprobs < 0 || opts.TopLogprobs > maxTopLogprobs:
		return Errorf(KindBadRequest, "top_logprobs is %d; it must be between 0 and %d", opts.TopLogprobs, maxTopLogprobs)
	case len(prompt)+1 > info.NCtx:
		return Errorf(KindContextLength, "the prompt is %d tokens but the context of model %q is %d tokens (at least one more is needed to generate); shorten the prompt or load the model with a larger num_ctx",
			len(prompt), e.name, info.NCtx)
	}
	total := info.NCtx
	if opts.MaxTokens > 0 {
		total = min(len(prompt)+opts.MaxTokens, info.NCtx)
	}
	if need := blocksFor(total, info.BlockSize); need > info.NumBlocks {
		return Errorf(KindNoMemory, "the KV cache for %d tokens (prompt %d + max_tokens %d) needs %d blocks of %d tokens but model %q has %d; lower max_tokens or shorten the prompt",
			total, len(prompt), opts.MaxTokens, need, info.BlockSize, e.name, info.NumBlocks)
	}
	return nil
}

// refused logs and counts a request that ended before reaching a model.
func (m *Manager) refused(ctx context.Context, model string, t0 time.Time, err error) (Result, error) {
	status := statusOf("", err)
	m.counters.request(status, Usage{})
	m.log.Warn("request refused", "id", requestID(ctx), "model", model, "status", status,
		"ms", time.Since(t0).Milliseconds(), "err", err)
	return Result{}, err
}

// finished logs and counts the end of a request.
func (m *Manager) finished(r *request, model string, a genArgs, res Result, err error) (Result, error) {
	res.Usage.LoadDuration = a.loadDur
	res.Usage.Context = a.numCtx
	status := statusOf(res.FinishReason, err)
	m.counters.request(status, res.Usage)
	u := res.Usage
	attrs := []any{"id", r.id, "model", model, "status", status,
		"prompt_tokens", u.PromptTokens, "cached_tokens", u.CachedTokens, "generated_tokens", u.CompletionTokens,
		"load_ms", u.LoadDuration.Milliseconds(), "prefill_ms", u.PrefillDuration.Milliseconds(),
		"decode_ms", u.DecodeDuration.Milliseconds(), "total_ms", time.Since(a.t0).Milliseconds()}
	if u.DecodeDuration > 0 && u.CompletionTokens > 1 {
		attrs = append(attrs, "decode_tps", float64(u.CompletionTokens-1)/u.DecodeDuration.Seconds())
	}
	if err != nil && res.FinishReason != "cancelled" {
		m.log.Warn("request failed", append(attrs, "err", err)...)
	} else {
		m.log.Info("request finished", attrs...)
	}
	return res, err
}

// statusOf names a request's outcome for logs and metrics.
func statusOf(reason string, err error) string {
	if reason != "" {
		return reason
	}
	var re *Error
	switch {
	case err == nil:
		return "stop"
	case errors.As(err, &re):
		return string(re.Kind)
	case isContextErr(err):
		return "cancelled"
	}
	return string(KindInternal)
}
