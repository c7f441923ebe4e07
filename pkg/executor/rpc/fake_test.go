package rpc

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// Tokens that make the fake executor misbehave.
const (
	tokHang  = 9001 // Step blocks until its process is killed
	tokExit  = 9002 // the process exits in the middle of Step
	tokPanic = 9003 // Step panics
)

// fakeExec answers steps with the sum of the work's tokens (mod 1000) and,
// when asked, logits [pos, -inf, +inf, NaN] for each input token.
type fakeExec struct {
	next   executor.SeqID
	seqs   map[executor.SeqID]sampling.Params
	closed bool
}

func newFake() *fakeExec { return &fakeExec{next: 1, seqs: map[executor.SeqID]sampling.Params{}} }

func (f *fakeExec) Info() executor.Info {
	return executor.Info{Arch: "fake", NCtx: 64, NVocab: 1000, BlockSize: 4, NumBlocks: 32, Processor: "CPU"}
}

func (f *fakeExec) NewSeq(p sampling.Params) (executor.SeqID, error) {
	if err := p.Validate(); err != nil {
		return 0, fmt.Errorf("%w: %w", executor.ErrBadRequest, err)
	}
	id := f.next
	f.next++
	f.seqs[id] = p
	return id, nil
}

func (f *fakeExec) FreeSeq(id executor.SeqID) { delete(f.seqs, id) }

func (f *fakeExec) Step(_ context.Context, batch []executor.Work) ([]executor.Result, error) {
	out := make([]executor.Result, len(batch))
	for i, w := range batch {
		out[i].Seq = w.Seq
		p, ok := f.seqs[w.Seq]
		if !ok {
			out[i].Err = executor.Errorf(executor.KindBadRequest, "unknown sequence %d", w.Seq)
			continue
		}
		sum := 0
		for _, t := range w.Tokens {
			switch t {
			case tokHang:
				time.Sleep(time.Hour)
			case tokExit:
				os.Exit(3)
			case tokPanic:
				panic("fake forward pass")
			}
			sum += int(t)
		}
		if b, ok := p.LogitBias[7]; ok && math.IsInf(float64(b), -1) {
			sum = 7000 // shows the -Inf bias crossed intact
		}
		if w.Allowed != nil {
			sum += len(w.Allowed) * 10000
		}
		out[i].Token, out[i].Logprob = int32(sum%1000), float32(math.Inf(-1))
		out[i].Top = []executor.TokenLogprob{{Token: 1, Logprob: -0.5}}
		if w.Logits == executor.LogitsAll {
			for j := range w.Tokens {
				out[i].Logits = append(out[i].Logits, []float32{float32(w.Pos + j), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())})
			}
		}
	}
	return out, nil
}

func (f *fakeExec) Memory() executor.MemoryInfo {
	return executor.MemoryInfo{WeightsBytes: 100, KVBytes: 200, FreeBytes: 300}
}

func (f *fakeExec) Close() error { f.closed = true; return nil }

// openFake is an Opener serving fakeExec; the path "missing" fails.
func openFake(ctx context.Context, p LoadParams) (executor.Executor, error) {
	if p.Path == "missing" {
		return nil, executor.Errorf(executor.KindBadRequest, "model file missing does not exist")
	}
	if p.Path == "slow" {
		time.Sleep(time.Hour)
	}
	return newFake(), nil
}
