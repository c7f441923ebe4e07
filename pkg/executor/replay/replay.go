// Package replay wraps an executor so that every sequence samples a fixed
// script of tokens instead of drawing them. It is for tests only: a
// daemon started with HELEXA_TEST_REPLAY installs Text as its loader's
// executor wrapper, so that its models "write" a given text and the chat
// formats around generation can be tested end to end with a real model.
package replay

import (
	"context"
	"fmt"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/sampling"
)

// Text returns the executor wrapper (loader.Files.Wrap) that makes a
// model write text: its executor's sequences sample text encoded with the
// model's tokenizer (special tokens parsed), then the end-of-sequence
// token when the model has one. Tests only.
func Text(text string) func(executor.Executor, *tokenizer.Tokenizer) (executor.Executor, error) {
	return func(ex executor.Executor, tok *tokenizer.Tokenizer) (executor.Executor, error) {
		ids, err := tok.Encode(text, false, true)
		if err != nil {
			return nil, fmt.Errorf("encoding the replay text: %w", err)
		}
		if eos := tok.EOS(); eos != tokenizer.NoToken {
			ids = append(ids, eos)
		}
		return New(ex, ids), nil
	}
}

// Executor is an executor.Executor whose sampled tokens are Script, in
// order, for every sequence; the wrapped executor still runs each step
// (so KV, logits and logprobs stay real). Past the end of the script the
// wrapped executor's own tokens come through.
type Executor struct {
	executor.Executor
	script []int32
	next   map[executor.SeqID]int // the next script index of each sequence
}

// New wraps inner so that its sequences sample script.
func New(inner executor.Executor, script []int32) *Executor {
	return &Executor{Executor: inner, script: append([]int32(nil), script...), next: map[executor.SeqID]int{}}
}

// NewSeq allocates a sequence that starts at the beginning of the script.
func (e *Executor) NewSeq(p sampling.Params) (executor.SeqID, error) {
	id, err := e.Executor.NewSeq(p)
	if err == nil {
		e.next[id] = 0
	}
	return id, err
}

// FreeSeq releases the sequence.
func (e *Executor) FreeSeq(id executor.SeqID) {
	delete(e.next, id)
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
		n, ok := e.next[r.Seq]
		if !sample[r.Seq] || r.Err != nil || !ok || n >= len(e.script) {
			continue
		}
		r.Token = e.script[n]
		e.next[r.Seq] = n + 1
	}
	return res, nil
}
