package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/sampling"
)

// benchOptions are the flags of `helexa bench`.
type benchOptions struct {
	Model       string // the MODEL argument
	Host        string // a daemon address; empty = in-process engine
	Concurrency []int
	NumPredict  int // tokens to generate per sequence
	Prompt      string
	Temperature float32
	NumCtx      int
	JSON        bool
	// llama-bench mode (-p > 0): prefill of NPrompt tokens and decode of
	// NumPredict tokens over Repetitions, then the streams curve.
	NPrompt     int
	Depth       int // tokens of context before each llama-bench test (-d)
	Repetitions int
	Threads     int
	Device      string // where the in-process engine runs models (default HELEXA_DEVICE)
	ignoreEOS   bool   // set by the llama-bench mode for the streams curve
}

func newBenchCmd(s streams) *cobra.Command {
	opts := benchOptions{Concurrency: []int{1, 2, 4, 8}, NumPredict: 128, Prompt: "Once upon a time", Repetitions: 5}
	cmd := &cobra.Command{
		Use:   "bench MODEL",
		Short: "Measure aggregate decode throughput at several concurrency levels",
		Long: `Run N concurrent completions of the same prompt for each concurrency level
and report the aggregate decode tokens/s (continuous batching lets several
sequences share each weight read). Runs an in-process engine by default, or
against a daemon with --host. A warm-up request loads the model first.
Sequences stop early at an end-of-generation token; the table shows the
tokens actually generated.

With -p N (the llama-bench mode, comparable with llama.cpp's llama-bench
-p N -n M -r R -t T): after a warm-up, R repetitions of a prefill of exactly
N random tokens (never from the prefix cache) and of a decode of M tokens
after a 4-token prompt (past any end-of-generation token), reported as mean
± standard deviation of tokens/s, then the aggregate decode curve over
--streams concurrent sequences of M tokens each. The header names the model,
quant, where it runs and, on the CPU, the threads and CPU kernels. With
-d D (llama-bench's -d) both tests run after a context of D random tokens,
prefilled first and untimed, which the prefix cache serves to the tests:
pp512@d4096 and tg128@d4096 (the context must fit --num-ctx).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runBench(cmd.Context(), opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Host, "host", "", "daemon address host:port to benchmark (default: an in-process engine)")
	f.IntSliceVar(&opts.Concurrency, "concurrency", opts.Concurrency, "comma-separated concurrency levels")
	addNumPredictFlag(cmd, &opts.NumPredict, opts.NumPredict, "tokens to generate per sequence", "tokens")
	f.StringVar(&opts.Prompt, "prompt", opts.Prompt, "prompt (raw completion, no chat template)")
	f.Float32Var(&opts.Temperature, "temperature", 0, "sampling temperature (0 = greedy)")
	addNumCtxFlag(cmd, &opts.NumCtx)
	f.BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	f.IntVarP(&opts.NPrompt, "n-prompt", "p", 0, "llama-bench mode: prefill this many tokens (pp test); 0 = the concurrency table only")
	f.IntVarP(&opts.Depth, "n-depth", "d", 0, "llama-bench mode: run each test after a context of this many tokens (prefilled first, untimed, then served by the prefix cache)")
	f.IntVarP(&opts.Repetitions, "repetitions", "r", opts.Repetitions, "llama-bench mode: repetitions of each test")
	f.IntVarP(&opts.Threads, "threads", "t", 0, "CPU threads of the in-process engine (default HELEXA_NUM_THREADS or all cores)")
	f.IntSliceVar(&opts.Concurrency, "streams", opts.Concurrency, "same as --concurrency: the streams of the aggregate decode curve")
	addDeviceFlag(cmd, &opts.Device)
	return cmd
}

// benchLevel is one concurrency level's result.
type benchLevel struct {
	Concurrency     int     `json:"concurrency"`
	GeneratedTokens int     `json:"generated_tokens"`
	WallSeconds     float64 `json:"wall_s"`
	// DecodeTPS is the aggregate decode rate: tokens after each sequence's
	// first, over the window from the first first-token to the last finish.
	DecodeTPS float64 `json:"decode_tokens_per_s"`
	// EndToEndTPS is all generated tokens over the level's wall time.
	EndToEndTPS float64 `json:"end_to_end_tokens_per_s"`
	// PerSeqDecodeTPS is the mean of each sequence's own decode speed.
	PerSeqDecodeTPS float64 `json:"per_sequence_decode_tokens_per_s"`
	MeanTTFTMillis  float64 `json:"mean_ttft_ms"`
}

// validate refuses the first flag out of its range, naming it and the
// range.
func (o benchOptions) validate() error {
	if len(o.Concurrency) == 0 {
		return fmt.Errorf("--concurrency needs at least one level, e.g. 1,2,4,8")
	}
	for _, c := range o.Concurrency {
		if c < 1 || c > 1024 {
			return fmt.Errorf("--concurrency level %d is out of range: want 1 to 1024", c)
		}
	}
	if err := firstOutOfRange([]flagRange{
		{"-n/--num-predict", strconv.Itoa(o.NumPredict), o.NumPredict >= 1, "at least 1 token per sequence"},
		{"--temperature", fmtNum(o.Temperature), o.Temperature >= 0 && finite(o.Temperature), "a number >= 0 (0 = greedy)"},
		{"--num-ctx", strconv.Itoa(o.NumCtx), o.NumCtx >= 0, "a positive number of tokens (0 = the default)"},
		{"-p/--n-prompt", strconv.Itoa(o.NPrompt), o.NPrompt >= 0, "0 (the concurrency table only) or a number of tokens"},
		{"-r/--repetitions", strconv.Itoa(o.Repetitions), o.Repetitions >= 1, "at least 1"},
		{"-t/--threads", strconv.Itoa(o.Threads), o.Threads >= 0, "0 (all cores) or a number of threads"},
		{"-d/--n-depth", strconv.Itoa(o.Depth), o.Depth >= 0, "0 or a number of tokens"},
	}); err != nil {
		return err
	}
	if o.Depth > 0 && o.NPrompt == 0 {
		return fmt.Errorf("-d %d is a depth for the llama-bench tests: give -p too (e.g. -p 512 -n 128 -d %d)", o.Depth, o.Depth)
	}
	return nil
}

func runBench(ctx context.Context, opts benchOptions, s streams) error {
	if err := opts.validate(); err != nil {
		return err
	}
	model, err := localModelArg(opts.Model)
	if err != nil {
		return err
	}
	model = engine.CanonicalName(model)
	if err := applyBenchThreads(opts); err != nil {
		return err
	}
	svc, closeSvc, err := benchService(ctx, opts.Host, opts.Device, runLogger(s.Err, false))
	if err != nil {
		return err
	}
	defer closeSvc()
	if _, err := svc.Load(ctx, engine.LoadRequest{Model: model, NumCtx: opts.NumCtx}); err != nil {
		return modelError("loading", model, err)
	}
	head, vocab, err := describeBench(ctx, svc, model, opts)
	if err != nil {
		return err
	}
	if opts.NPrompt > 0 {
		return runLlamaBench(ctx, svc, head, vocab, opts, s)
	}
	if _, err := benchOne(ctx, svc, model, opts, 4, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	var levels []benchLevel
	for _, c := range opts.Concurrency {
		lv, err := benchLevelRun(ctx, svc, model, opts, c)
		if err != nil {
			return fmt.Errorf("concurrency %d: %w", c, err)
		}
		levels = append(levels, lv)
		slog.Debug("bench level", "concurrency", c, "decode_tps", lv.DecodeTPS)
	}
	if opts.JSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(levels)
	}
	return printBench(s.Out, head, levels)
}

// benchService returns the engine to measure: a daemon client or an
// in-process Manager (closed by the returned func) logging to log (as run
// does: warnings only, unless HELEXA_LOG_LEVEL is set, so the per-request
// lines do not bury the table).
func benchService(ctx context.Context, host, device string, log *slog.Logger) (engine.Service, func(), error) {
	if host != "" {
		c, t, err := daemonClient(host, nil)
		if err != nil {
			return nil, nil, err
		}
		if err := c.Health(ctx); err != nil {
			return nil, nil, daemonError(t, c, err)
		}
		return c, func() {}, nil
	}
	mgr, _, err := newServeEngine(ctx, log, device)
	if err != nil {
		return nil, nil, err
	}
	return mgr, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = mgr.Close(cctx)
	}, nil
}

// benchRun is one sequence's measurements.
type benchRun struct {
	start, first, end time.Time
	res               engine.Result
}

// benchOne runs one completion and times it.
func benchOne(ctx context.Context, svc engine.Service, model string, opts benchOptions, tokens int, seed uint64) (benchRun, error) {
	req := engine.CompletionRequest{Model: model, Prompt: opts.Prompt, AddSpecial: true, Options: engine.Options{
		Sampling:  sampling.Params{Temperature: opts.Temperature, Seed: seed},
		MaxTokens: tokens,
		IgnoreEOS: opts.ignoreEOS,
	}}
	r := benchRun{start: time.Now()}
	res, err := svc.Complete(ctx, req, func(engine.Delta) error {
		if r.first.IsZero() {
			r.first = time.Now()
		}
		return nil
	})
	r.end, r.res = time.Now(), res
	if r.first.IsZero() {
		r.first = r.end
	}
	return r, err
}

// benchLevelRun runs c sequences at once.
func benchLevelRun(ctx context.Context, svc engine.Service, model string, opts benchOptions, c int) (benchLevel, error) {
	runs := make([]benchRun, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = benchOne(ctx, svc, model, opts, opts.NumPredict, uint64(i+1))
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	for _, err := range errs {
		if err != nil {
			return benchLevel{}, err
		}
	}
	return summarizeBench(c, runs, wall), nil
}

// summarizeBench turns the runs of one level into its figures. The
// aggregate and the per-sequence rates count the same tokens (all but each
// sequence's first) on the same clock, so one sequence's two figures are
// equal and the aggregate of several is never below any one of them by
// accident of measurement.
func summarizeBench(c int, runs []benchRun, wall time.Duration) benchLevel {
	lv := benchLevel{Concurrency: c, WallSeconds: wall.Seconds()}
	var firstFirst, lastEnd time.Time
	decodeTokens, perSeq, ttft := 0, 0.0, 0.0
	for _, r := range runs {
		n := r.res.Usage.CompletionTokens
		lv.GeneratedTokens += n
		decodeTokens += max(n-1, 0)
		if firstFirst.IsZero() || r.first.Before(firstFirst) {
			firstFirst = r.first
		}
		if r.end.After(lastEnd) {
			lastEnd = r.end
		}
		perSeq += rate(max(n-1, 0), r.end.Sub(r.first).Seconds())
		ttft += r.first.Sub(r.start).Seconds() * 1e3
	}
	lv.DecodeTPS = rate(decodeTokens, lastEnd.Sub(firstFirst).Seconds())
	lv.EndToEndTPS = rate(lv.GeneratedTokens, wall.Seconds())
	lv.PerSeqDecodeTPS = perSeq / float64(len(runs))
	lv.MeanTTFTMillis = ttft / float64(len(runs))
	return lv
}

// printBench prints the concurrency table: the aggregate decode rate, the
// figure the table is about, first.
func printBench(w io.Writer, head benchHeader, levels []benchLevel) error {
	if _, err := fmt.Fprintf(w, "%s\n\n", head.line()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CONCURRENCY\tAGGREGATE DECODE tok/s\tPER-STREAM tok/s\tEND-TO-END tok/s\tTTFT ms\tTOKENS\tWALL s\t")
	for _, l := range levels {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.0f\t%d\t%.2f\t\n", l.Concurrency, l.DecodeTPS, l.PerSeqDecodeTPS,
			l.EndToEndTPS, l.MeanTTFTMillis, l.GeneratedTokens, l.WallSeconds)
	}
	return tw.Flush()
}
