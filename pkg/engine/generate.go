package engine

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/helexa/helexa/pkg/executor"
)

// stopper holds back generated text that might be the start of a stop
// string, so a stop string split across tokens is never partly emitted.
type stopper struct {
	stops   []string
	pending string
	matched string // the stop string that ended the output, once one has
}

// push adds text and returns what is safe to emit. When a stop string
// appears, it returns the text before it and stopped = true.
func (s *stopper) push(text string) (emit string, stopped bool) {
	s.pending += text
	if len(s.stops) == 0 {
		emit, s.pending = s.pending, ""
		return emit, false
	}
	cut := -1
	for _, st := range s.stops {
		if i := strings.Index(s.pending, st); i >= 0 && (cut < 0 || i < cut) {
			cut, s.matched = i, st
		}
	}
	if cut >= 0 {
		emit, s.pending = s.pending[:cut], ""
		return emit, true
	}
	hold := 0
	for _, st := range s.stops {
		for n := min(len(st)-1, len(s.pending)); n > hold; n-- {
			if strings.HasSuffix(s.pending, st[:n]) {
				hold = n
				break
			}
		}
	}
	emit = s.pending[:len(s.pending)-hold]
	s.pending = s.pending[len(s.pending)-hold:]
	return emit, false
}

// flush returns whatever is held back (the stream ended without a stop).
func (s *stopper) flush() string {
	out := s.pending
	s.pending = ""
	return out
}

// generation turns one sequence's sampled tokens into deltas: incremental
// detokenizing, end-of-generation tokens, stop strings, max tokens, JSON
// mode, and the model's output format (reasoning, content, tool calls).
type generation struct {
	tok       Tokenizer
	dec       Decoder
	stop      stopper
	out       OutputParser // nil: everything is content
	json      *jsonState   // nil unless JSON mode
	maxTokens int
	logprobs  bool
	ignoreEOS bool // benchmarks: end-of-generation tokens do not stop it
	generated int
	calls     int         // tool calls emitted so far
	held      []TokenInfo // tokens whose text has not been emitted yet
	// budgetCut: in JSON mode, the token budget (max_tokens or the context)
	// narrowed this step's choice, so an object that closes now was closed
	// by the budget: its finish reason is "length".
	budgetCut bool
	// dropped is set when text of accepted tokens was left out of the
	// output (a stop string, invalid JSON): their ids no longer stand for
	// the output.
	dropped bool
}

// newGeneration starts a sequence's output. In a chat request that
// declares tools (p.Tools), the text of tool-call control tokens is kept
// (the tokenizer's tool decoder) for the output parser.
func newGeneration(m *Model, opts Options, p ParseOptions) *generation {
	dec := m.Tokenizer.NewDecoder()
	if td, ok := m.Tokenizer.(toolDecoderTokenizer); ok && p.Tools != nil {
		dec = td.NewToolDecoder()
	}
	g := &generation{
		tok:       m.Tokenizer,
		dec:       dec,
		stop:      stopper{stops: nonEmpty(opts.Stop)},
		maxTokens: opts.MaxTokens,
		logprobs:  opts.Logprobs || opts.TopLogprobs > 0,
		ignoreEOS: opts.IgnoreEOS,
	}
	if m.Output != nil {
		// JSON mode constrains the whole output, so there is no reasoning part.
		p.NoReasoning = p.NoReasoning || opts.JSONMode
		g.out = m.Output.NewParser(p)
	}
	if opts.JSONMode {
		g.json = &jsonState{}
	}
	return g
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// accept takes one sampled token. It returns the delta to send (nil when
// there is nothing yet) and the finish reason ("" to go on): a stop after
// tool calls is "tool_calls".
func (g *generation) accept(r executor.Result) (*Delta, string) {
	d, reason := g.acceptToken(r)
	if reason == "stop" && g.calls > 0 {
		reason = finishToolCalls
	}
	return d, reason
}

// finishToolCalls is the finish reason of a turn that stopped after
// making tool calls.
const finishToolCalls = "tool_calls"

func (g *generation) acceptToken(r executor.Result) (*Delta, string) {
	if g.tok.IsEOG(r.Token) && !g.ignoreEOS {
		return g.finish(false), "stop"
	}
	g.generated++
	info := TokenInfo{ID: r.Token, Text: g.tok.TokenText(r.Token)}
	if g.logprobs {
		info.Logprob, info.Top = r.Logprob, r.Top
		for _, t := range r.Top {
			info.TopText = append(info.TopText, g.tok.TokenText(t.Token))
		}
	}
	g.held = append(g.held, info)
	if g.json != nil && !g.json.feed([]byte(info.Text)) {
		// The mask should have prevented it; end rather than emit
		// invalid JSON.
		return g.finish(true), "stop"
	}
	emit, stopped := g.stop.push(g.dec.Add(r.Token))
	switch {
	case stopped:
		g.dropped = true
		d := g.delta(emit, false)
		g.held = nil // the stop string's tokens are not part of the output
		return merge(d, g.flushOutput()), "stop"
	case g.json != nil && g.json.done():
		if g.budgetCut {
			return g.appendFinish(emit), "length"
		}
		return g.appendFinish(emit), "stop"
	case g.maxTokens > 0 && g.generated >= g.maxTokens:
		return g.appendFinish(emit), "length"
	}
	return g.delta(emit, false), ""
}

// appendFinish emits text and then everything still held.
func (g *generation) appendFinish(emit string) *Delta {
	return merge(g.delta(emit, false), g.finish(false))
}

// merge appends b to a; either may be nil.
func merge(a, b *Delta) *Delta {
	if a == nil {
		return b
	}
	if b != nil {
		a.Content += b.Content
		a.Reasoning += b.Reasoning
		a.Tokens = append(a.Tokens, b.Tokens...)
		a.ToolCalls = append(a.ToolCalls, b.ToolCalls...)
	}
	return a
}

// flushOutput returns what the output parser still holds.
func (g *generation) flushOutput() *Delta {
	if g.out == nil {
		return nil
	}
	d := g.out.Flush()
	g.named(&d)
	if empty(&d) {
		return nil
	}
	return &d
}

// finish flushes the detokenizer, the stop buffer and the output parser.
// drop discards held text (it was invalid).
func (g *generation) finish(drop bool) *Delta {
	if drop {
		g.held, g.dropped = nil, true
		return nil
	}
	text, stopped := g.stop.push(g.dec.Flush())
	if stopped {
		g.dropped = true
	} else {
		text += g.stop.flush()
	}
	return merge(g.delta(text, true), g.flushOutput())
}

// delta builds the delta for emitted text; held tokens ride along with the
// first delta that carries output (or with the final one when final).
func (g *generation) delta(text string, final bool) *Delta {
	var d Delta
	if g.out != nil {
		d = g.out.Push(text)
		g.named(&d)
	} else {
		d.Content = text
	}
	if empty(&d) && !final {
		return nil
	}
	d.Tokens, g.held = g.held, nil
	if empty(&d) && len(d.Tokens) == 0 {
		return nil
	}
	return &d
}

// empty reports a delta without output (tokens aside).
func empty(d *Delta) bool { return d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 }

// named counts d's tool calls and gives every call its format did not
// name an id.
func (g *generation) named(d *Delta) {
	for i := range d.ToolCalls {
		if d.ToolCalls[i].ID == "" {
			d.ToolCalls[i].ID = newCallID()
		}
	}
	g.calls += len(d.ToolCalls)
}

// newCallID returns an OpenAI-style tool call id.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
