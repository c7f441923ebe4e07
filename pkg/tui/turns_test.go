package tui

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// charTok is a toy vocabulary: printable ASCII, "\n", "hello" and
// " world", encoded greedily longest first, so text spelled one character
// a token is re-tokenized with other ids.
type charTok struct{ vocab []string }

func newCharTok() *charTok {
	v := []string{"\n", "hello", " world"}
	for c := byte(32); c < 127; c++ {
		v = append(v, string(c))
	}
	return &charTok{vocab: v}
}

func (t *charTok) id(s string) int32 {
	for i, v := range t.vocab {
		if v == s {
			return int32(i)
		}
	}
	panic("no token " + s)
}

func (t *charTok) Encode(text string, _, _ bool) ([]int32, error) {
	var out []int32
	for text != "" {
		best := -1
		for i, v := range t.vocab {
			if strings.HasPrefix(text, v) && (best < 0 || len(v) > len(t.vocab[best])) {
				best = i
			}
		}
		if best < 0 {
			return nil, engine.Errorf(engine.KindBadRequest, "cannot encode %q", text[:1])
		}
		out = append(out, int32(best))
		text = text[len(t.vocab[best]):]
	}
	return out, nil
}

func (t *charTok) IsEOG(int32) bool           { return false }
func (t *charTok) TokenText(id int32) string  { return t.vocab[id] }
func (t *charTok) VocabSize() int             { return len(t.vocab) }
func (t *charTok) NewDecoder() engine.Decoder { return charDec{t} }
func (d charDec) Add(id int32) string         { return d.t.vocab[id] }
func (charDec) Flush() string                 { return "" }

type charDec struct{ t *charTok }

// lineTemplate renders "role:content\n" lines and ends with "assistant:".
type lineTemplate struct{}

func (lineTemplate) Render(_ context.Context, in engine.ChatInput) (string, error) {
	var msgs []Message
	if err := json.Unmarshal(in.Messages, &msgs); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + ":" + m.Content + "\n")
	}
	b.WriteString("assistant:")
	return b.String(), nil
}

// spellExec is a toy executor with a paged KV store of token ids: after
// the last ':' it reads back through the block table, it spells answer
// one character a token. Every step says on started that it has begun and
// waits for a value on gate.
type spellExec struct {
	info          executor.Info
	tok           *charTok
	answer        string
	started, gate chan struct{}
	kv            [][]int32
	next          executor.SeqID
}

func (x *spellExec) Info() executor.Info                            { return x.info }
func (x *spellExec) NewSeq(sampling.Params) (executor.SeqID, error) { x.next++; return x.next, nil }
func (x *spellExec) FreeSeq(executor.SeqID)                         {}
func (x *spellExec) Memory() executor.MemoryInfo                    { return executor.MemoryInfo{FreeBytes: 1 << 30} }
func (x *spellExec) Close() error                                   { return nil }

func (x *spellExec) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	select { // (no one reads it once the test stops pacing)
	case x.started <- struct{}{}:
	default:
	}
	select {
	case <-x.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	bs := x.info.BlockSize
	out := make([]executor.Result, len(batch))
	for i, w := range batch {
		for j, t := range w.Tokens {
			p := w.Pos + j
			x.kv[w.Blocks[p/bs]][p%bs] = t
		}
		out[i].Seq = w.Seq
		if !w.Sample {
			continue
		}
		end, k := w.Pos+len(w.Tokens), 0
		for p := end - 1; p >= 0 && x.kv[w.Blocks[p/bs]][p%bs] != x.tok.id(":"); p-- {
			k++
		}
		out[i].Token = x.tok.id(x.answer[k%len(x.answer) : k%len(x.answer)+1])
	}
	return out, nil
}

// spellLoader serves one spellExec model.
type spellLoader struct{ x *spellExec }

func (l spellLoader) Load(context.Context, string, engine.LoadOptions) (*engine.Model, error) {
	return &engine.Model{Executor: l.x, Tokenizer: l.x.tok, Template: lineTemplate{},
		Details: engine.ModelDetails{Name: "toy", Arch: "toy"}}, nil
}

// TestStoppedAnswerReused: through the chat's own turn path, a second turn
// after an answer stopped with Ctrl+C is prefilled from the prefix cache
// for the whole first turn: its prompt and every token of the answer but
// the last (sampled, never fed back, so its KV was never computed),
// rounded down to whole blocks of 4 (the prefix cache shares full blocks).
// The answer's ids are not the tokenizer's spelling of its text, so
// re-tokenizing the conversation would miss most of it.
func TestStoppedAnswerReused(t *testing.T) {
	const bs = 4
	tok := newCharTok()
	x := &spellExec{tok: tok, answer: "hello world hello", gate: make(chan struct{}, 64), started: make(chan struct{}, 64),
		info: executor.Info{Arch: "toy", NCtx: 256, NCtxTrain: 256, NVocab: tok.VocabSize(), BlockSize: bs, NumBlocks: 128, Processor: "CPU"}}
	x.kv = make([][]int32, x.info.NumBlocks)
	for i := range x.kv {
		x.kv[i] = make([]int32, bs)
	}
	cfg := engine.DefaultConfig()
	cfg.NumCtx, cfg.KeepAlive, cfg.ChunkSize = 256, -1, 512
	mgr := engine.NewManager(cfg, spellLoader{x}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	d := newDriver(t, mgr, func(c *Config) { c.Model = "toy"; c.Options.MaxTokens = 100 })

	const shown = 8
	d.typeText("say hi")
	d.enter()
	for range shown { // the prefill step (first token), then a step a token
		x.gate <- struct{}{}
	}
	d.settle(func() bool { return d.m.gen != nil && len(d.m.gen.entry.text) == shown })
	for range shown + 1 { // the step after the last shown token waits at the gate
		<-x.started
	}
	d.ctrl('c')
	x.gate <- struct{}{} // the step running when stopped samples one more token
	d.settle(func() bool { return d.m.gen == nil })
	first := *d.m.last
	if first.CompletionTokens != shown+1 || len(d.m.msgs) != 2 || d.m.msgs[1].Content != x.answer[:shown+1] {
		t.Fatalf("stopped answer: %d tokens, conversation %+v; want the %d tokens %q", first.CompletionTokens, d.m.msgs, shown+1, x.answer[:shown+1])
	}

	close(x.gate)
	d.say("again")
	u := d.m.last
	if want := (first.PromptTokens + first.CompletionTokens - 1) / bs * bs; u.CachedTokens != want {
		t.Errorf("second turn: %d of %d prompt tokens cached; want %d (the first turn's %d prompt and %d answer tokens but the last, in whole blocks of %d)",
			u.CachedTokens, u.PromptTokens, want, first.PromptTokens, first.CompletionTokens, bs)
	}
}
