package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/sampling"
	"github.com/helexa/helexa/pkg/tui"
)

// runOptions are the flags of `helexa run`.
type runOptions struct {
	Model         string   // the MODEL argument
	Prompt        []string // the PROMPT words (joined with spaces)
	System        string
	Temperature   float32
	TopP          float32
	TopK          int
	MinP          float32
	RepeatPenalty float32
	Seed          int64 // <0 = a fresh seed per answer
	NumPredict    int
	NumCtx        int
	Raw           bool
	Verbose       bool
	Think         bool
	ThinkSet      bool // --think was given (true or false)
	HideThinking  bool
	TP            int    // tensor-parallel ranks (0: the default; helexa tp)
	Device        string // where an in-process engine runs the model (default HELEXA_DEVICE)
	Host          string // --host: the daemon to use (default HELEXA_HOST, else the detached daemon's)
}

func newRunCmd(s streams) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run MODEL [PROMPT...]",
		Short: "Chat with a model in the terminal, or answer one prompt",
		Long: `Chat with a model in a terminal UI, or answer one prompt and exit.

MODEL is a Hugging Face reference (org/repo[:QUANT], pulled on first use), a
.gguf file or a model directory. With a PROMPT argument, or with a prompt on
stdin, the answer is streamed to stdout as plain text and run exits; otherwise
an interactive chat starts (/help inside lists the commands and keys). Several
PROMPT words are joined with spaces.

When a helexa daemon answers, run uses it (the model is not loaded twice):
the one at HELEXA_HOST, else the one ` + "`helexa serve --detach`" + ` started, else
at 127.0.0.1:13131 (--verbose says which). Otherwise run says so on stderr
and loads the model in this process.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("run needs a MODEL: helexa run MODEL [PROMPT] (a reference such as Qwen/Qwen3-0.6B-GGUF:Q8_0, a .gguf file or a model directory)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ThinkSet = cmd.Flags().Changed("think")
			opts.Model, opts.Prompt = args[0], args[1:]
			return runRun(cmd.Context(), opts, s)
		},
	}
	bindRunFlags(cmd, &opts)
	return cmd
}

// bindRunFlags adds the flags run and tp share.
func bindRunFlags(cmd *cobra.Command, opts *runOptions) {
	f := cmd.Flags()
	f.StringVar(&opts.System, "system", "", "system prompt")
	f.Float32Var(&opts.Temperature, "temperature", 0.8, "sampling temperature (0 = greedy)")
	f.Float32Var(&opts.TopP, "top-p", 0.95, "nucleus sampling: keep the smallest set of tokens whose probability reaches this (1 = off)")
	f.IntVar(&opts.TopK, "top-k", 40, "keep only the K most likely tokens (0 = off)")
	f.Float32Var(&opts.MinP, "min-p", 0.05, "drop tokens less likely than this fraction of the most likely one (0 = off)")
	f.Float32Var(&opts.RepeatPenalty, "repeat-penalty", 1.0, "penalty for recently generated tokens (1 = off)")
	f.Int64Var(&opts.Seed, "seed", -1, "random seed for reproducible sampling (-1 = random)")
	addNumPredictFlag(cmd, &opts.NumPredict, 0, "maximum tokens to generate (0 = until the model stops or the context is full)", "")
	addNumCtxFlag(cmd, &opts.NumCtx)
	addDeviceFlag(cmd, &opts.Device)
	addHostFlag(cmd, &opts.Host)
	f.BoolVar(&opts.Raw, "raw", false, "feed the prompt as is, without the chat template (one-shot only)")
	f.BoolVar(&opts.Verbose, "verbose", false, "print which daemon is used (and why that one), load time, prompt and generation token counts and speeds to stderr")
	f.BoolVar(&opts.Think, "think", false, "enable (--think) or disable (--think=false) thinking for models that support it (default: the model's template default)")
	f.BoolVar(&opts.HideThinking, "hide-thinking", false, "do not show the model's thinking")
}

// request is what one answer is asked with.
func (o runOptions) request() (engine.Options, error) {
	if err := o.checkRanges(); err != nil {
		return engine.Options{}, err
	}
	p := sampling.Params{
		Temperature: o.Temperature, TopP: o.TopP, TopK: o.TopK, MinP: o.MinP,
		RepeatPenalty: o.RepeatPenalty,
	}
	if o.Seed >= 0 {
		p.Seed = uint64(o.Seed)
	} else {
		p.Seed = rand.Uint64()
	}
	if err := p.Validate(); err != nil {
		return engine.Options{}, fmt.Errorf("check the sampling flags (--temperature, --top-p, --top-k, --min-p, --repeat-penalty): %w", err)
	}
	return engine.Options{Sampling: p, MaxTokens: o.NumPredict, NumCtx: o.NumCtx}, nil
}

// checkRanges refuses the first flag whose value is out of its range,
// naming the flag and the range.
func (o runOptions) checkRanges() error {
	return firstOutOfRange([]flagRange{
		{"--temperature", fmtNum(o.Temperature), o.Temperature >= 0 && finite(o.Temperature), "a number >= 0 (0 = greedy)"},
		{"--top-p", fmtNum(o.TopP), o.TopP >= 0 && o.TopP <= 1, "a number from 0 to 1 (1 = off)"},
		{"--top-k", strconv.Itoa(o.TopK), o.TopK >= 0, "an integer >= 0 (0 = off)"},
		{"--min-p", fmtNum(o.MinP), o.MinP >= 0 && o.MinP <= 1, "a number from 0 to 1 (0 = off)"},
		{"--repeat-penalty", fmtNum(o.RepeatPenalty), o.RepeatPenalty >= 0 && finite(o.RepeatPenalty), "a number >= 0 (1 = off)"},
		{"--seed", strconv.FormatInt(o.Seed, 10), o.Seed >= -1, "-1 (random) or an integer >= 0"},
		{"-n/--num-predict", strconv.Itoa(o.NumPredict), o.NumPredict >= 0, "0 (no limit) or a positive number of tokens"},
		{"--num-ctx", strconv.Itoa(o.NumCtx), o.NumCtx >= 0, "a positive number of tokens (0 = the default)"},
	})
}

func (o runOptions) think() *bool {
	if !o.ThinkSet {
		return nil
	}
	t := o.Think
	return &t
}

func runRun(ctx context.Context, opts runOptions, s streams) error {
	reqOpts, err := opts.request()
	if err != nil {
		return err
	}
	model, err := localModelArg(opts.Model)
	if err != nil {
		return err
	}
	ask := askedCtx(opts.NumCtx)
	prompt, interactive, err := readPrompt(opts.Prompt, s)
	if err != nil {
		return err
	}
	if interactive && opts.Raw {
		return errors.New("--raw needs a prompt (an argument or stdin): the chat UI always uses the chat template")
	}
	log := runLogger(s.Err, interactive)
	router := &progressRouter{}
	bars, finishBars := newProgress(s.Err)
	router.set(bars)
	svc, closeSvc, err := connect(ctx, log, router, s.Err, opts)
	if err != nil {
		finishBars()
		return err
	}
	defer closeSvc()
	if c, ok := svc.(*api.Client); ok {
		if err := applyClientEnv(&opts, &reqOpts, c.Addr(), s.Err); err != nil {
			return err
		}
	}
	if err := pullThroughDaemon(ctx, svc, model, router); err != nil {
		finishBars()
		return modelError("pulling", model, err)
	}
	st, loadDur, err := loadModel(ctx, svc, engine.LoadRequest{Model: model, NumCtx: opts.NumCtx, TP: opts.TP}, router, s.Err)
	finishBars()
	if err != nil {
		return err
	}
	if opts.Verbose {
		fmt.Fprintf(s.Err, "load time:  %s\n", loadDur.Round(time.Millisecond))
	}
	details, err := svc.Show(ctx, model)
	if err != nil && interactive {
		return fmt.Errorf("describing %s: %w", model, err)
	}
	if details.Context == 0 {
		details.Context = st.Context
	}
	printCapped(s.Err, ask, st.Context, model, details)
	if !interactive {
		return oneShot(ctx, svc, model, prompt, opts, reqOpts, details, s)
	}
	return runChat(ctx, svc, model, details, opts, reqOpts, router, s)
}

// readPrompt returns the prompt (arguments, then stdin when it is not a
// terminal) and whether the chat UI should run instead.
func readPrompt(args []string, s streams) (string, bool, error) {
	prompt := strings.Join(args, " ")
	if isTerminalReader(s.In) {
		if prompt == "" && !isTerminal(s.Out) {
			return "", false, errors.New("no prompt: stdout is not a terminal, so give the prompt as an argument or on stdin")
		}
		return prompt, prompt == "", nil
	}
	if s.In != nil {
		b, err := io.ReadAll(s.In)
		if err != nil {
			return "", false, fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		if in := strings.TrimRight(string(b), "\n"); in != "" {
			if prompt != "" {
				prompt += "\n\n"
			}
			prompt += in
		}
	}
	if strings.TrimSpace(prompt) == "" {
		return "", false, errors.New("no prompt: give one as an argument or on stdin, or run from a terminal to chat")
	}
	return prompt, false, nil
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runLogger is the engine's logger: warnings to stderr for one-shot runs,
// less the failures run reports itself as its error (HELEXA_LOG_LEVEL,
// when set, wins and shows everything); nothing while the chat UI owns
// the terminal.
func runLogger(w io.Writer, interactive bool) *slog.Logger {
	if interactive {
		return slog.New(slog.DiscardHandler)
	}
	if envvars.LogLevel.IsSet() {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: logLevel(slog.LevelWarn)}))
	}
	return slog.New(dropReported{slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})})
}

// dropReported leaves out the engine's log lines for a failed load or
// request: run prints that error itself, so the line would say it twice.
type dropReported struct{ slog.Handler }

func (h dropReported) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "model load failed", "request refused", "request failed":
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h dropReported) WithAttrs(as []slog.Attr) slog.Handler {
	return dropReported{h.Handler.WithAttrs(as)}
}

func (h dropReported) WithGroup(name string) slog.Handler {
	return dropReported{h.Handler.WithGroup(name)}
}

// connect uses the daemon pickDaemon chooses when it answers, and an
// in-process engine on the device setting's device otherwise (saying so
// on errw).
func connect(ctx context.Context, log *slog.Logger, router *progressRouter, errw io.Writer, opts runOptions) (engine.Service, func(), error) {
	verbose, device := opts.Verbose, opts.Device
	t := pickDaemon(opts.Host)
	client, err := t.client()
	if err != nil {
		return nil, nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	err = client.Health(pctx)
	cancel()
	if err == nil {
		if verbose {
			fmt.Fprintln(errw, t.describe(client))
		}
		return client, func() {}, nil
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if opts.Host != "" { // the daemon asked for by name, not a guess
		return nil, nil, daemonError(t, client, err)
	}
	fmt.Fprintf(errw, "no helexa daemon answers at %s (from %s): loading the model in this process\n", client.Addr(), t.From)
	exec, err := localExecStarter(ctx, log, device)
	if err != nil {
		return nil, nil, err
	}
	mgr, err := newEngineWith(log, router.emit, func(c *engine.Config) { c.KeepAlive = -1 }, exec)
	if err != nil {
		return nil, nil, err
	}
	closeFn := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = mgr.Close(cctx)
	}
	return mgr, closeFn, nil
}

// loadModel loads the model, showing a spinner on a terminal when it takes
// more than a second (downloads show their own progress bars).
func loadModel(ctx context.Context, svc engine.Service, req engine.LoadRequest, router *progressRouter, errw io.Writer) (engine.ModelStatus, time.Duration, error) {
	t0 := time.Now()
	stop := startSpinner(errw, "loading "+req.Model, router.sawEvents, time.Second)
	st, err := svc.Load(ctx, req)
	stop()
	if err != nil {
		return st, 0, modelError("loading", req.Model, err)
	}
	return st, time.Since(t0), nil
}

// startSpinner draws "label ⠋ 1.2s" on a terminal once after has passed,
// until stop is called; quiet reports when something else is drawing
// progress.
func startSpinner(w io.Writer, label string, quiet func() bool, after time.Duration) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		t0 := time.Now()
		drawn := false
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				if drawn {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-tick.C:
			}
			if time.Since(t0) < after || quiet() {
				continue
			}
			fmt.Fprintf(w, "\r\x1b[K%s %c %.1fs", label, frames[i%len(frames)], time.Since(t0).Seconds())
			drawn = true
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// runChat runs the terminal UI.
func runChat(ctx context.Context, svc engine.Service, model string, details engine.ModelDetails, opts runOptions, reqOpts engine.Options, router *progressRouter, s streams) error {
	var hist *tui.History
	if dir, err := daemonStateDir(); err == nil {
		hist, err = tui.LoadHistory(filepath.Join(dir, "history"))
		if err != nil {
			fmt.Fprintln(s.Err, "warning:", err)
		}
	}
	progress := make(chan string, 16)
	router.set(func(e hub.Event) {
		if line := progressLine(e); line != "" {
			select {
			case progress <- line:
			default: // the UI is behind; it will catch the next one
			}
		}
	})
	defer router.set(nil)
	// The UI owns the terminal: nothing else may write to it.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	defer slog.SetDefault(prev)
	return tui.Run(ctx, tui.Config{
		Service: svc, Model: model, Details: details, System: opts.System, Options: reqOpts,
		Think: opts.think(), HideThinking: opts.HideThinking, History: hist,
		Progress: progress, Seeded: opts.Seed >= 0,
	}, s.In, s.Out)
}

// progressLine is a hub event as a short status text.
func progressLine(e hub.Event) string {
	switch e.Kind {
	case hub.EventStart, hub.EventProgress, hub.EventVerify:
		pct := ""
		if e.Total > 0 {
			pct = fmt.Sprintf(" %d%%", e.Bytes*100/e.Total)
		}
		verb := "downloading"
		if e.Kind == hub.EventVerify {
			verb = "verifying"
		}
		return fmt.Sprintf("%s %s%s of %s", verb, e.File, pct, humanize.Bytes(e.Total))
	case hub.EventNotice:
		return e.Message
	}
	return ""
}

// oneShot answers one prompt on stdout as plain streamed text.
func oneShot(ctx context.Context, svc engine.Service, model, prompt string, opts runOptions, reqOpts engine.Options, details engine.ModelDetails, s streams) error {
	p := &plainPrinter{w: s.Out, tty: isTerminal(s.Out), hide: opts.HideThinking}
	var res engine.Result
	var err error
	if opts.Raw {
		res, err = svc.Complete(ctx, engine.CompletionRequest{Model: model, Prompt: prompt, AddSpecial: true, Options: reqOpts}, p.delta)
	} else {
		var msgs []tui.Message
		if opts.System != "" {
			msgs = append(msgs, tui.Message{Role: "system", Content: opts.System})
		}
		msgs = append(msgs, tui.Message{Role: "user", Content: prompt})
		raw, jerr := json.Marshal(msgs)
		if jerr != nil {
			return fmt.Errorf("encoding the prompt: %w", jerr)
		}
		req := engine.ChatRequest{Model: model, Messages: raw, Options: reqOpts}
		if t := opts.think(); t != nil {
			req.TemplateKwargs = map[string]any{"enable_thinking": *t}
		}
		res, err = svc.Chat(ctx, req, p.delta)
	}
	p.finish()
	if p.err != nil {
		return fmt.Errorf("writing the answer: %w", p.err)
	}
	if err != nil {
		var re *engine.Error
		if errors.As(err, &re) && re.Kind == engine.KindContextLength {
			return promptTooLong(details.Context, details, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return err
	}
	if contextFull(res) {
		fmt.Fprintf(s.Err, "\n%s\n", contextFullNote(res.Usage, details))
	}
	if opts.Verbose {
		printUsage(s.Err, res.Usage)
	}
	return nil
}

// daemonOnlyVars are settings only the process that runs the models
// applies: set in a client's shell they would do nothing, so run says so.
func daemonOnlyVars() []envvars.Var {
	return []envvars.Var{envvars.NumThreads, envvars.NumParallel, envvars.MaxQueue, envvars.ChunkSize, envvars.KVType,
		envvars.MaxLoadedModels, envvars.Runner, envvars.RunnerTimeout, envvars.MaxRequestBytes}
}

// applyClientEnv sends the caller's HELEXA_NUM_CTX and HELEXA_KEEP_ALIVE
// with the requests to a daemon (unless flags set them) and warns about
// settings only the daemon applies.
func applyClientEnv(opts *runOptions, reqOpts *engine.Options, addr string, errw io.Writer) error {
	if opts.NumCtx == 0 && envvars.NumCtx.IsSet() {
		n, err := envvars.NumCtx.Int()
		if err != nil {
			return err
		}
		opts.NumCtx, reqOpts.NumCtx = n, n
	}
	if reqOpts.KeepAlive == nil && envvars.KeepAlive.IsSet() {
		d, err := engine.ParseKeepAlive(envvars.KeepAlive.Get())
		if err != nil {
			return fmt.Errorf("%s: %w", envvars.KeepAlive.Name, err)
		}
		reqOpts.KeepAlive = &d
	}
	for _, v := range daemonOnlyVars() {
		if v.IsSet() {
			fmt.Fprintf(errw, "note: %s is set here, but the daemon at %s runs the models with its own settings; set it where `helexa serve` runs\n", v.Name, addr)
		}
	}
	return nil
}

// contextFull reports a generation that stopped because the context ran
// out (not because of max_tokens).
func contextFull(res engine.Result) bool {
	u := res.Usage
	return res.FinishReason == "length" && u.Context > 0 && u.PromptTokens+u.CompletionTokens >= u.Context
}

// pullThroughDaemon has the daemon fetch a Hub model (from its cache when
// complete) before the load, drawing the daemon's progress here.
func pullThroughDaemon(ctx context.Context, svc engine.Service, model string, router *progressRouter) error {
	c, ok := svc.(*api.Client)
	if !ok {
		return nil // in-process: the loader draws its own progress
	}
	if _, err := os.Stat(model); err == nil {
		return nil // a local file or directory
	}
	return c.PullWith(ctx, api.PullRequest{Model: model, PreferCache: true}, func(p api.PullProgress) {
		router.emit(hub.Event{Kind: hub.EventKind(p.Status), Repo: model, File: p.File, Bytes: p.Completed, Total: p.Total})
	})
}

// plainPrinter writes deltas to stdout: reasoning dimmed on a terminal,
// between "Thinking..." lines otherwise, or not at all when hidden.
type plainPrinter struct {
	w        io.Writer
	tty      bool
	hide     bool
	thinking bool // inside a reasoning block
	last     byte // the last byte written
	err      error
}

func (p *plainPrinter) write(s string) {
	if p.err != nil || s == "" {
		return
	}
	_, p.err = io.WriteString(p.w, s)
	p.last = s[len(s)-1]
}

func (p *plainPrinter) delta(d engine.Delta) error {
	if d.Reasoning != "" && !p.hide {
		if !p.thinking {
			p.thinking = true
			if p.tty {
				p.write("\x1b[2m")
			} else {
				p.write("Thinking...\n")
			}
		}
		p.write(d.Reasoning)
	}
	if d.Content != "" {
		p.endThinking()
		p.write(d.Content)
	}
	return p.err
}

func (p *plainPrinter) endThinking() {
	if !p.thinking {
		return
	}
	p.thinking = false
	if p.tty {
		p.write("\x1b[0m\n\n")
	} else {
		p.write("\n...done thinking.\n\n")
	}
}

// finish closes a reasoning block and ends the output with a newline.
func (p *plainPrinter) finish() {
	p.endThinking()
	if p.last != 0 && p.last != '\n' {
		p.write("\n")
	}
}

// printUsage is --verbose's summary.
func printUsage(w io.Writer, u engine.Usage) {
	fmt.Fprintf(w, "prompt:     %d tokens (%d cached)", u.PromptTokens, u.CachedTokens)
	if r := tui.PrefillRate(u); r > 0 {
		fmt.Fprintf(w, ", %.1f tok/s", r)
	}
	fmt.Fprintf(w, "\ngenerated:  %d tokens", u.CompletionTokens)
	if r := tui.DecodeRate(u); r > 0 {
		fmt.Fprintf(w, ", %.1f tok/s", r)
	}
	fmt.Fprintln(w)
}
