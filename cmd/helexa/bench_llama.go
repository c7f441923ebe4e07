package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/sampling"
)

// llamaBenchReport is the llama-bench mode's result (-p): prefill and
// decode speed over repetitions, and the aggregate decode curve.
type llamaBenchReport struct {
	benchHeader
	Repetitions int          `json:"repetitions"`
	Depth       int          `json:"depth,omitempty"` // tokens of context before each test (-d)
	Prefill     benchStat    `json:"prefill"`
	Decode      benchStat    `json:"decode"`
	Streams     []benchLevel `json:"streams"`
}

// benchStat is one test's tokens/s over the repetitions.
type benchStat struct {
	Test    string    `json:"test"` // "pp512", "tg128" (llama-bench's names), "tg128@d4096" after a context
	Tokens  int       `json:"tokens"`
	Mean    float64   `json:"mean_tokens_per_s"`
	StdDev  float64   `json:"stddev_tokens_per_s"`
	Samples []float64 `json:"samples_tokens_per_s"`
}

// newBenchStat computes the mean and sample standard deviation.
func newBenchStat(test string, tokens int, samples []float64) benchStat {
	st := benchStat{Test: test, Tokens: tokens, Samples: samples}
	for _, v := range samples {
		st.Mean += v
	}
	st.Mean /= float64(len(samples))
	if len(samples) > 1 {
		var ss float64
		for _, v := range samples {
			ss += (v - st.Mean) * (v - st.Mean)
		}
		st.StdDev = math.Sqrt(ss / float64(len(samples)-1))
	}
	return st
}

// randomPrompt is n token ids drawn from the vocabulary (never an id below
// 3, where BOS/EOS usually sit), different for every seed so that no run
// reuses another's prefix cache.
func randomPrompt(n, vocab int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 0x68656c657861))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(3 + r.IntN(max(vocab-3, 1)))
	}
	return out
}

// timedTokens runs one completion of a token prompt that ignores
// end-of-generation tokens and returns its usage.
func timedTokens(ctx context.Context, svc engine.Service, model string, prompt []int32, n int) (engine.Usage, error) {
	res, err := svc.Complete(ctx, engine.CompletionRequest{Model: model, Tokens: prompt, Options: engine.Options{
		Sampling: sampling.Params{Temperature: 0}, MaxTokens: n, IgnoreEOS: true,
	}}, func(engine.Delta) error { return nil })
	return res.Usage, err
}

// runLlamaBench measures pp (prefill of exactly -p tokens, no prefix
// cache) and tg (-n tokens after a 4-token prompt, past any EOS) over -r
// repetitions after a warm-up, then the aggregate decode curve. With -d,
// both run after a context of that many tokens (llama-bench's depth): a
// random prefix prefilled first, untimed, which the prefix cache then
// serves to both tests.
func runLlamaBench(ctx context.Context, svc engine.Service, head benchHeader, vocab int, opts benchOptions, s streams) error {
	model := head.Model
	rep := llamaBenchReport{benchHeader: head, Repetitions: opts.Repetitions, Depth: opts.Depth}
	var pp, tg []float64
	for i := 0; i <= opts.Repetitions; i++ { // i == 0 is the warm-up
		var prefix []int32
		if opts.Depth > 0 {
			prefix = randomPrompt(opts.Depth, vocab, uint64(1<<32+i))
			if _, err := timedTokens(ctx, svc, model, prefix, 1); err != nil {
				return fmt.Errorf("a context of %d tokens: %w", opts.Depth, err)
			}
		}
		u, err := timedTokens(ctx, svc, model, slices.Concat(prefix, randomPrompt(opts.NPrompt, vocab, uint64(2*i+1))), 1)
		if err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
		v, err := timedTokens(ctx, svc, model, slices.Concat(prefix, randomPrompt(4, vocab, uint64(2*i+2))), opts.NumPredict)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if i == 0 {
			continue
		}
		pp = append(pp, rate(u.PromptTokens-u.CachedTokens, u.PrefillDuration.Seconds()))
		tg = append(tg, rate(v.CompletionTokens-1, v.DecodeDuration.Seconds()))
	}
	at := ""
	if opts.Depth > 0 {
		at = "@d" + strconv.Itoa(opts.Depth)
	}
	rep.Prefill = newBenchStat("pp"+strconv.Itoa(opts.NPrompt)+at, opts.NPrompt, pp)
	rep.Decode = newBenchStat("tg"+strconv.Itoa(opts.NumPredict)+at, opts.NumPredict, tg)
	opts.ignoreEOS = true
	for _, c := range opts.Concurrency {
		lv, err := benchLevelRun(ctx, svc, model, opts, c)
		if err != nil {
			return fmt.Errorf("%d streams: %w", c, err)
		}
		rep.Streams = append(rep.Streams, lv)
	}
	if opts.JSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printLlamaBench(s.Out, rep)
}

func rate(tokens int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(tokens) / seconds
}

// benchHeader is what both modes print first: the model and where and how
// it runs.
type benchHeader struct {
	Model      string `json:"model"`
	Quant      string `json:"quant"`
	Parameters int64  `json:"parameters"`
	Processor  string `json:"processor"` // as helexa ps shows it: CPU, CUDA:0 <name>, TP×N
	Threads    string `json:"threads"`   // a number, or "daemon's"
	Kernels    string `json:"kernels"`
}

// describeBench fills the header of the loaded model and returns its
// vocabulary size (for the llama-bench mode's random prompts).
func describeBench(ctx context.Context, svc engine.Service, model string, opts benchOptions) (benchHeader, int, error) {
	d, err := svc.Show(ctx, model)
	if err != nil {
		return benchHeader{}, 0, fmt.Errorf("describing %s: %w", model, err)
	}
	return benchHeader{Model: model, Quant: d.Quant, Parameters: d.Parameters,
		Processor: benchProcessor(ctx, svc, model, d.Path), Threads: benchThreads(opts), Kernels: benchKernels(opts)}, d.VocabSize, nil
}

// line is the header as text: "model NAME (QUANT, 1.50B parameters), on
// CPU, threads 8, kernels c-avx2+fma". On a GPU the CPU's threads and
// kernels play no part and are left out.
func (h benchHeader) line() string {
	where := fmt.Sprintf("threads %s, kernels %s", h.Threads, h.Kernels)
	switch {
	case strings.HasPrefix(h.Processor, "CUDA"):
		where = "on " + h.Processor
	case h.Processor != "":
		where = "on " + h.Processor + ", " + where
	}
	return fmt.Sprintf("model %s (%s, %s parameters), %s", shortName(h.Model), orDash(h.Quant), humanize.Count(h.Parameters), where)
}

// benchThreads is the in-process engine's CPU threads as a number: -t,
// else HELEXA_NUM_THREADS, else every CPU this process may run on (what
// the CPU executor uses then).
func benchThreads(opts benchOptions) string {
	switch {
	case opts.Host != "":
		return "daemon's"
	case opts.Threads > 0:
		return strconv.Itoa(opts.Threads)
	}
	if n, err := envvars.NumThreads.Int(); err == nil && n > 0 {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(runtime.NumCPU())
}

// benchProcessor is where the loaded model runs, as ps shows it ("" when
// ps does not list it).
func benchProcessor(ctx context.Context, svc engine.Service, model, path string) string {
	ps, err := svc.PS(ctx)
	if err != nil {
		return ""
	}
	for _, m := range ps {
		if m.Name == model || (path != "" && m.Path == path) {
			return m.Processor
		}
	}
	return ""
}

func benchKernels(opts benchOptions) string {
	if opts.Host != "" {
		return "daemon's"
	}
	return quant.KernelPath()
}

// applyBenchThreads makes the in-process engine (and the runner processes
// it starts, which inherit the environment) use -t threads.
func applyBenchThreads(opts benchOptions) error {
	if opts.Threads <= 0 {
		return nil
	}
	if opts.Host != "" {
		return fmt.Errorf("-t/--threads sets the in-process engine's threads; a daemon uses its own (HELEXA_NUM_THREADS where it runs)")
	}
	return os.Setenv(envvars.NumThreads.Name, strconv.Itoa(opts.Threads))
}

func printLlamaBench(w io.Writer, r llamaBenchReport) error {
	fmt.Fprintf(w, "%s, %d repetitions\n\n", r.line(), r.Repetitions)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TEST\tTOKENS/S\t± STDDEV\t")
	for _, st := range []benchStat{r.Prefill, r.Decode} {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t\n", st.Test, st.Mean, st.StdDev)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STREAMS\tAGGREGATE DECODE tok/s\tPER-STREAM tok/s\t")
	for _, l := range r.Streams {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t\n", l.Concurrency, l.DecodeTPS, l.PerSeqDecodeTPS)
	}
	return tw.Flush()
}
