package engine

import (
	"strings"

	"github.com/helexa/helexa/pkg/executor"
)

// stopper holds back generated text that might be the start of a stop
// string, so a stop string split across tokens is never partly emitted.
type stopper struct {
	stops   []string
	pending string
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
			cut = i
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
// detokenizing, end-of-generation tokens, stop strings, max tokens, the
// reasoning split and JSON mode.
type generation struct {
	tok       Tokenizer
	dec       Decoder
	stop      stopper
	think     ThinkSplitter // nil: everything is content
	json      *jsonState    // nil unless JSON mode
	maxTokens int
	logprobs  bool
	ignoreEOS bool // benchmarks: end-of-generation tokens do not stop it
	generated int
	held      []TokenInfo // tokens whose text has not been emitted yet
}

// newGeneration starts a sequence's output; hasTools (a chat request that
// declares tools) keeps the text of tool-call control tokens (toolTags) for
// the API layer's tool-call parser.
func newGeneration(m *Model, opts Options, startInThink, hasTools bool) *generation {
	dec := m.Tokenizer.NewDecoder()
	if td, ok := m.Tokenizer.(toolDecoderTokenizer); ok && hasTools {
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
	// JSON mode constrains the whole output, so there is no reasoning part.
	if m.NewThinkSplitter != nil && !opts.JSONMode {
		g.think = m.NewThinkSplitter(startInThink)
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
// there is nothing yet) and the finish reason ("" to go on).
func (g *generation) accept(r executor.Result) (*Delta, string) {
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
		d := g.delta(emit, false)
		g.held = nil // the stop string's tokens are not part of the output
		return merge(d, g.flushThink()), "stop"
	case g.json != nil && g.json.done():
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
	}
	return a
}

// flushThink returns what the think splitter still holds.
func (g *generation) flushThink() *Delta {
	if g.think == nil {
		return nil
	}
	r, c := g.think.Flush()
	if r == "" && c == "" {
		return nil
	}
	return &Delta{Reasoning: r, Content: c}
}

// finish flushes the detokenizer, the stop buffer and the think splitter.
// drop discards held text (it was invalid).
func (g *generation) finish(drop bool) *Delta {
	if drop {
		g.held = nil
		return nil
	}
	text, stopped := g.stop.push(g.dec.Flush())
	if !stopped {
		text += g.stop.flush()
	}
	return merge(g.delta(text, true), g.flushThink())
}

// delta builds the delta for emitted text; held tokens ride along with the
// first delta that carries text (or with the final one when final).
func (g *generation) delta(text string, final bool) *Delta {
	var d Delta
	if g.think != nil {
		d.Reasoning, d.Content = g.think.Push(text)
	} else {
		d.Content = text
	}
	if d.Content == "" && d.Reasoning == "" && !final {
		return nil
	}
	d.Tokens, g.held = g.held, nil
	if d.Content == "" && d.Reasoning == "" && len(d.Tokens) == 0 {
		return nil
	}
	return &d
}
