// Package replay wraps an executor so that every sequence samples a fixed
// script of tokens instead of drawing them (tests only: HELEXA_TEST_REPLAY
// makes a daemon's models "write" a given text, so the chat formats
// around generation can be tested end to end with a real model).
package replay

import (
	"context"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

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
