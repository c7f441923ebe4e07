// Package replay wraps an executor so that every sequence samples a fixed
// script of tokens instead of drawing them. It is for tests only: a
// daemon started with HELEXA_TEST_REPLAY installs Texts as its loader's
// executor wrapper, so that its models "write" given answers and the chat
// formats around generation (and agents that make several requests in
// turn) can be tested end to end with a real model.
package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/sampling"
)

// Separator is the line that separates the answers of a replay file: the
// n-th generation writes the n-th answer.
const Separator = "<|helexa-replay-next|>"

// Split splits a replay file into its answers at Separator lines (the
// newline before and after each separator belongs to the separator). A
// file without one is a single answer.
func Split(script string) []string {
	lines := strings.SplitAfter(script, "\n")
	var answers []string
	var cur strings.Builder
	for _, line := range lines {
		if strings.TrimRight(line, "\r\n") == Separator {
			answers = append(answers, strings.TrimSuffix(cur.String(), "\n"))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(answers, cur.String())
}

// Text returns the executor wrapper (loader.Files.Wrap) that makes a
// model write text for every sequence. Tests only.
func Text(text string) func(executor.Executor, *tokenizer.Tokenizer) (executor.Executor, error) {
	return Texts([]string{text})
}

// Texts returns the executor wrapper (loader.Files.Wrap) that makes a
// model write answers in turn: its n-th sequence samples answers[n]
// (the last answer once they run out), encoded with the model's
// tokenizer (special tokens parsed), then the end-of-sequence token when
// the model has one. Tests only.
func Texts(answers []string) func(executor.Executor, *tokenizer.Tokenizer) (executor.Executor, error) {
	return func(ex executor.Executor, tok *tokenizer.Tokenizer) (executor.Executor, error) {
		scripts := make([][]int32, 0, len(answers))
		for i, text := range answers {
			ids, err := tok.Encode(text, false, true)
			if err != nil {
				return nil, fmt.Errorf("encoding replay answer %d: %w", i+1, err)
			}
			if eos := tok.EOS(); eos != tokenizer.NoToken {
				ids = append(ids, eos)
			}
			scripts = append(scripts, ids)
		}
		return NewSequence(ex, scripts), nil
	}
}

// Executor is an executor.Executor whose sampled tokens come from scripts,
// in order: each new sequence takes the next script (the last one once
// they run out). The wrapped executor still runs each step (so KV, logits
// and logprobs stay real). Past the end of its script the wrapped
// executor's own tokens come through.
type Executor struct {
	executor.Executor
	scripts [][]int32
	started int                       // sequences allocated so far
	seqs    map[executor.SeqID]cursor // each live sequence's place in its script
}

// cursor is a sequence's script and the index of its next token.
type cursor struct {
	script []int32
	next   int
}

// New wraps inner so that every sequence samples script.
func New(inner executor.Executor, script []int32) *Executor {
	return NewSequence(inner, [][]int32{script})
}

// NewSequence wraps inner so that its n-th sequence samples scripts[n]
// (the last script from then on). scripts must not be empty.
func NewSequence(inner executor.Executor, scripts [][]int32) *Executor {
	own := make([][]int32, len(scripts))
	for i, s := range scripts {
		own[i] = append([]int32(nil), s...)
	}
	return &Executor{Executor: inner, scripts: own, seqs: map[executor.SeqID]cursor{}}
}

// NewSeq allocates a sequence that starts at the beginning of the next
// script.
func (e *Executor) NewSeq(p sampling.Params) (executor.SeqID, error) {
	id, err := e.Executor.NewSeq(p)
	if err == nil {
		n := min(e.started, len(e.scripts)-1)
		e.started++
		e.seqs[id] = cursor{script: e.scripts[n]}
	}
	return id, err
}

// FreeSeq releases the sequence.
func (e *Executor) FreeSeq(id executor.SeqID) {
	delete(e.seqs, id)
	e.Executor.FreeSeq(id)
}

// Step runs the wrapped step and replaces each sampled token with the
// sequence's next scripted one.
func (e *Executor) Step(ctx context.Context, batch []executor.Work) ([]executor.Result, error) {
	res, err := e.Executor.Step(ctx, batch)
	if err != nil {
		return res, err
	}
	sample := map[executor.SeqID]bool{}
	for _, w := range batch {
		sample[w.Seq] = sample[w.Seq] || w.Sample
	}
	for i := range res {
		r := &res[i]
		c, ok := e.seqs[r.Seq]
		if !sample[r.Seq] || r.Err != nil || !ok || c.next >= len(c.script) {
			continue
		}
		r.Token = c.script[c.next]
		c.next++
		e.seqs[r.Seq] = c
	}
	return res, nil
}
