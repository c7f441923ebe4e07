package tui

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/helexa/helexa/pkg/engine"
)

// generation is one answer being streamed.
type generation struct {
	id       int
	entry    *entry
	cancel   context.CancelFunc
	deltas   <-chan engine.Delta
	done     <-chan doneMsg
	started  time.Time
	first    time.Time // when the first piece arrived
	tokens   int
	stopping bool
	// ctxBase estimates the context the prompt fills before the engine
	// reports the exact count at the end of the answer.
	ctxBase int
}

// deltaMsg carries one streamed piece of an answer.
type deltaMsg struct {
	id    int
	delta engine.Delta
}

// doneMsg ends an answer.
type doneMsg struct {
	id  int
	res engine.Result
	err error
}

// send appends the user's message and starts streaming the answer.
func (m *Model) send(text string) tea.Cmd {
	m.addEntry(&entry{kind: kindUser, text: text})
	m.msgs = append(m.msgs, Message{Role: "user", Content: text})
	raw, err := wireMessages(m.system, m.msgs)
	if err != nil {
		m.msgs = m.msgs[:len(m.msgs)-1]
		m.addEntry(&entry{kind: kindError, text: err.Error()})
		return nil
	}
	req := engine.ChatRequest{Model: m.model, Messages: raw, Options: m.opts, TemplateKwargs: m.kwargs()}
	if !m.seeded {
		req.Options.Sampling.Seed = rand.Uint64()
	}
	ans := &entry{kind: kindAssistant, streaming: true}
	m.addEntry(ans)
	m.genSeq++
	ctx, cancel := context.WithCancel(m.ctx)
	deltas := make(chan engine.Delta, 64)
	done := make(chan doneMsg, 1)
	id := m.genSeq
	go func() {
		res, err := m.svc.Chat(ctx, req, func(d engine.Delta) error {
			select {
			case deltas <- d:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		close(deltas)
		done <- doneMsg{id: id, res: res, err: err}
	}()
	m.gen = &generation{id: id, entry: ans, cancel: cancel, deltas: deltas, done: done, started: time.Now(),
		ctxBase: m.promptEstimate(text)}
	return tea.Batch(m.gen.wait(), m.spin.Tick)
}

// promptEstimate guesses how much of the context a turn's prompt fills
// before the engine counts it: the previous turn's exact total plus about
// four bytes a token for the new message (and the system prompt on the
// first turn).
func (m *Model) promptEstimate(text string) int {
	added := len(text)
	if m.ctxUsed == 0 {
		added += len(m.system)
	}
	return m.ctxUsed + (added+3)/4
}

// liveRate is the answer's decode speed so far (0 before two tokens).
func (g *generation) liveRate(now time.Time) float64 {
	d := now.Sub(g.first)
	if g.first.IsZero() || g.tokens < 2 || d <= 0 {
		return 0
	}
	return float64(g.tokens-1) / d.Seconds()
}

// wait delivers the next delta, then the end.
func (g *generation) wait() tea.Cmd {
	id, deltas, done := g.id, g.deltas, g.done
	return func() tea.Msg {
		if d, ok := <-deltas; ok {
			return deltaMsg{id: id, delta: d}
		}
		return <-done
	}
}

func (m *Model) kwargs() map[string]any {
	if m.think == nil {
		return nil
	}
	return map[string]any{"enable_thinking": *m.think}
}

func (m *Model) onDelta(msg deltaMsg) tea.Cmd {
	g := m.gen
	if g == nil || msg.id != g.id {
		return nil
	}
	if g.first.IsZero() {
		g.first = time.Now()
	}
	g.tokens += max(1, len(msg.delta.Tokens))
	g.entry.reasoning += msg.delta.Reasoning
	g.entry.text += msg.delta.Content
	m.touch(g.entry)
	return g.wait()
}

func (m *Model) onDone(msg doneMsg) tea.Cmd {
	g := m.gen
	if g == nil || msg.id != g.id {
		return nil
	}
	m.gen = nil
	g.cancel()
	e := g.entry
	e.streaming = false
	e.elapsed = time.Since(g.started)
	res, err := msg.res, msg.err
	cancelled := res.FinishReason == "cancelled" || g.stopping && (err == nil || errors.Is(err, context.Canceled))
	if err != nil && !cancelled {
		m.failed(e, err)
		return nil
	}
	// A stopped answer keeps every token generated: what the engine had
	// not passed on yet comes with the result, so the conversation records
	// exactly the text of those tokens and the next turn reuses them all.
	e.reasoning += res.Undelivered.Reasoning
	e.text += res.Undelivered.Content
	u := res.Usage
	if u.CompletionTokens == 0 && g.tokens > 0 {
		// A daemon's stream cut by Ctrl+C carries no usage: count what
		// arrived.
		u.CompletionTokens = g.tokens
	}
	m.last = &u
	m.accumulate(u)
	if u.PromptTokens > 0 {
		m.ctxUsed = u.PromptTokens + u.CompletionTokens
	}
	if e.text == "" && e.reasoning == "" {
		// Nothing came back: forget the question so the next turn does
		// not send two user messages in a row.
		m.msgs = m.msgs[:len(m.msgs)-1]
	} else {
		m.msgs = append(m.msgs, Message{Role: "assistant", Content: e.text, Reasoning: e.reasoning})
	}
	e.stats = answerStats(u)
	if cancelled {
		e.stopped = true
	}
	m.touch(e)
	if res.FinishReason == "length" && m.details.Context > 0 && m.ctxUsed >= m.details.Context {
		m.addEntry(&entry{kind: kindNotice, text: fmt.Sprintf(
			"The context is full (%d of %d tokens%s): the answer was cut off. /clear starts a new conversation; %s.",
			m.ctxUsed, m.details.Context, m.trainedNote(), m.growHint())})
	}
	return nil
}

// failed reports an error for the answer in e and takes the unanswered
// question back out of the conversation (into the input, when it no
// longer fits the context).
func (m *Model) failed(e *entry, err error) {
	m.removeEntry(e)
	var question string
	if n := len(m.msgs); n > 0 && m.msgs[n-1].Role == "user" {
		question = m.msgs[n-1].Content
		m.msgs = m.msgs[:n-1]
	}
	var re *engine.Error
	if errors.As(err, &re) && re.Kind == engine.KindContextLength {
		m.addEntry(&entry{kind: kindNotice, text: "The conversation no longer fits the model's context" + m.ctxText() +
			", so this message was not sent (nothing was cut). /clear starts a new conversation (your message is back in the input); " + m.growHint() + ".\n" + re.Error()})
		if question != "" && m.input.Value() == "" {
			m.setInput(question)
		}
		return
	}
	m.addEntry(&entry{kind: kindError, text: err.Error()})
}

func (m *Model) ctxText() string {
	if m.details.Context > 0 {
		return fmt.Sprintf(" (%d tokens%s)", m.details.Context, m.trainedNote())
	}
	return ""
}

// atTrainedMax reports a context as large as the model was trained for:
// a larger num_ctx would be capped to it.
func (m *Model) atTrainedMax() bool {
	t := m.details.ContextTrain
	return t > 0 && m.details.Context >= t
}

// trainedNote marks a context at the model's trained maximum.
func (m *Model) trainedNote() string {
	if m.atTrainedMax() {
		return ", the most this model was trained for"
	}
	return ""
}

// growHint says what else makes room: a larger context when the model
// allows one, shorter answers when it does not.
func (m *Model) growHint() string {
	if m.atTrainedMax() {
		return "a larger num_ctx cannot help here; /set num_predict N keeps answers shorter"
	}
	return "/set num_ctx N loads the model with a larger context"
}

func (m *Model) accumulate(u engine.Usage) {
	m.answers++
	m.totals.PromptTokens += u.PromptTokens
	m.totals.CachedTokens += u.CachedTokens
	m.totals.CompletionTokens += u.CompletionTokens
	m.totals.PrefillDuration += u.PrefillDuration
	m.totals.DecodeDuration += u.DecodeDuration
}

// DecodeRate is generated tokens per second (the first token is counted
// with the prefill, as llama.cpp does).
func DecodeRate(u engine.Usage) float64 {
	if u.DecodeDuration <= 0 || u.CompletionTokens < 2 {
		return 0
	}
	return float64(u.CompletionTokens-1) / u.DecodeDuration.Seconds()
}

// PrefillRate is prompt tokens computed (not cached) per second.
func PrefillRate(u engine.Usage) float64 {
	n := u.PromptTokens - u.CachedTokens
	if u.PrefillDuration <= 0 || n <= 0 {
		return 0
	}
	return float64(n) / u.PrefillDuration.Seconds()
}

func answerStats(u engine.Usage) string {
	s := fmt.Sprintf("%d %s", u.CompletionTokens, plural(u.CompletionTokens, "token", "tokens"))
	if r := DecodeRate(u); r > 0 {
		s += fmt.Sprintf(" · %.1f tok/s", r)
	}
	return s
}

// loadedMsg ends a /load.
type loadedMsg struct {
	id      int
	model   string
	status  engine.ModelStatus
	details engine.ModelDetails
	err     error
}

// load loads model (with the current num_ctx) and makes it current.
func (m *Model) load(model string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.genSeq++
	id := m.genSeq
	m.loading = &loadState{id: id, model: model, started: time.Now(), cancel: cancel}
	svc, numCtx := m.svc, m.opts.NumCtx
	run := func() tea.Msg {
		defer cancel()
		st, err := svc.Load(ctx, engine.LoadRequest{Model: model, NumCtx: numCtx})
		if err != nil {
			return loadedMsg{id: id, model: model, err: err}
		}
		d, err := svc.Show(ctx, model)
		if d.Context == 0 {
			d.Context = st.Context
		}
		return loadedMsg{id: id, model: model, status: st, details: d, err: err}
	}
	return tea.Batch(run, m.spin.Tick)
}

func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	if m.loading == nil || msg.id != m.loading.id {
		return nil
	}
	m.loading = nil
	if msg.err != nil {
		if errors.Is(msg.err, context.Canceled) {
			m.addEntry(&entry{kind: kindInfo, text: "Loading " + msg.model + " stopped."})
		} else {
			m.addEntry(&entry{kind: kindError, text: msg.err.Error()})
		}
		return nil
	}
	if msg.model != m.model {
		m.model = msg.model
		m.msgs = nil
		m.ctxUsed = 0
		m.addEntry(&entry{kind: kindInfo, text: "Loaded " + msg.model + "; new conversation."})
	} else {
		m.addEntry(&entry{kind: kindInfo, text: fmt.Sprintf("Reloaded %s with a context of %d tokens.", msg.model, msg.details.Context)})
	}
	if asked, got, train := m.opts.NumCtx, msg.details.Context, msg.details.ContextTrain; asked > got && train > 0 && got >= train {
		m.addEntry(&entry{kind: kindNotice, text: fmt.Sprintf(
			"num_ctx %d is more than %s was trained for: its context is %d tokens.", asked, displayName(msg.model), got)})
	}
	m.last = nil // the speed of answers from before the load
	m.details = msg.details
	if c := m.details.Context; c > 0 && m.ctxUsed >= c {
		m.addEntry(&entry{kind: kindNotice, text: fmt.Sprintf(
			"The conversation so far (%d tokens) does not fit the new context of %d tokens: /clear starts a new one.", m.ctxUsed, c)})
	}
	return nil
}
