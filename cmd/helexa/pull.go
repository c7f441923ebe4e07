package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/hub"
)

// pullOptions are the flags of `helexa pull`.
type pullOptions struct {
	Refs     []string // the MODEL arguments
	JSON     bool     // progress and result as JSON lines on stdout
	CacheDir string   // overrides the cache root
}

func newPullCmd(s streams) *cobra.Command {
	var opts pullOptions
	cmd := &cobra.Command{
		Use:   "pull MODEL...",
		Short: "Download models from Hugging Face into the local cache",
		Long: `Download models into the Hugging Face cache (shared with huggingface_hub).

MODEL is org/repo[:QUANT][@REVISION] (e.g. Qwen/Qwen3-0.6B-GGUF:Q8_0), an
hf.co/ URL, or an alias such as qwen3:0.6b. Without a quant, Q4_K_M is picked
(or the closest available). Safetensors repos fetch config, tokenizer and
*.safetensors files. Interrupted downloads resume.

` + aliasHelp(hub.BuiltinAliases()),
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return runPull(cmd.Context(), opts, s)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print progress events and the result as JSON lines")
	addCacheDirFlag(cmd, &opts.CacheDir)
	return cmd
}

// aliasHelp lists the built-in aliases for `pull --help`.
func aliasHelp(aliases map[string]string) string {
	names := slices.Sorted(maps.Keys(aliases))
	var b strings.Builder
	b.WriteString("Aliases (add your own under \"aliases\" in the config file, $" + envvars.Config.Name + "):\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-16s %s\n", n, aliases[n])
	}
	return strings.TrimRight(b.String(), "\n")
}

func runPull(ctx context.Context, opts pullOptions, s streams) error {
	var progress hub.ProgressFunc
	var done func()
	if opts.JSON {
		progress, done = jsonProgress(s.Out), func() {}
	} else {
		progress, done = newProgress(s.Err)
	}
	defer done()
	client, err := newHubClient(opts.CacheDir, progress)
	if err != nil {
		return err
	}
	for _, ref := range opts.Refs {
		res, err := client.Resolve(ctx, ref)
		if err != nil {
			return modelError("pull", ref, err)
		}
		if err := printPulled(s.Out, res, opts.JSON); err != nil {
			return err
		}
	}
	return nil
}

func printPulled(w io.Writer, res *hub.Resolved, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Event string `json:"event"`
			*hub.Resolved
		}{"pulled", res})
	}
	if res.Local {
		_, err := fmt.Fprintf(w, "%s is a local %s model; nothing to download\n", res.ModelPath, res.Format)
		return err
	}
	rev := res.Revision
	if len(res.Commit) >= 12 {
		rev += " (" + res.Commit[:12] + ")"
	}
	_, err := fmt.Fprintf(w, "%s\n  revision %s\n  path     %s\n", res.Ref, rev, res.ModelPath)
	return err
}

// newHubClient builds a hub client from the environment, the config file
// and a --cache-dir override. run and serve resolve models through it too.
func newHubClient(cacheDir string, progress hub.ProgressFunc) (*hub.Client, error) {
	return newHubClientWith(cacheDir, progress, false)
}

// newHubClientWith is newHubClient; preferCache answers references whose
// snapshot is complete in the cache without asking the Hub (loading a
// model never waits on the network for what it already has).
func newHubClientWith(cacheDir string, progress hub.ProgressFunc, preferCache bool) (*hub.Client, error) {
	o, err := hub.OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	if cacheDir != "" {
		if o.CacheDir, err = filepath.Abs(cacheDir); err != nil {
			return nil, fmt.Errorf("--cache-dir: %w", err)
		}
	}
	o.Progress = progress
	o.PreferCache = preferCache
	return hub.New(o), nil
}

func jsonProgress(w io.Writer) hub.ProgressFunc {
	enc := json.NewEncoder(w)
	return func(e hub.Event) { _ = enc.Encode(e) }
}

// newProgress renders hub events on w: one progress bar per file on a
// terminal, one line per file start and finish otherwise (or when
// HF_HUB_DISABLE_PROGRESS_BARS is true). done finishes any open bar.
func newProgress(w io.Writer) (hub.ProgressFunc, func()) {
	if isTerminal(w) && !hub.Truthy(envvars.HFNoProgress.Get()) {
		b := &barRenderer{w: w, bars: map[string]*progressbar.ProgressBar{}}
		return b.handle, b.finish
	}
	return lineProgress(w), func() {}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lineProgress prints a line when a file starts and when it ends.
func lineProgress(w io.Writer) hub.ProgressFunc {
	return func(e hub.Event) {
		switch e.Kind {
		case hub.EventNotice:
			fmt.Fprintln(w, e.Message)
		case hub.EventStart:
			if e.Bytes > 0 {
				fmt.Fprintf(w, "downloading %s (%s, resuming at %s)\n", e.File, humanize.Bytes(e.Total), humanize.Bytes(e.Bytes))
			} else {
				fmt.Fprintf(w, "downloading %s (%s)\n", e.File, humanize.Bytes(e.Total))
			}
		case hub.EventDone:
			fmt.Fprintf(w, "downloaded  %s\n", e.File)
		case hub.EventCached:
			fmt.Fprintf(w, "cached      %s\n", e.File)
		}
	}
}

// barRenderer keeps one progressbar per file.
type barRenderer struct {
	w    io.Writer
	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
}

func (b *barRenderer) handle(e hub.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e.Kind {
	case hub.EventNotice:
		fmt.Fprintln(b.w, e.Message)
	case hub.EventStart:
		bar := progressbar.NewOptions64(e.Total,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(e.File),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }),
		)
		_ = bar.Set64(e.Bytes)
		b.bars[e.File] = bar
	case hub.EventProgress:
		if bar := b.bars[e.File]; bar != nil {
			_ = bar.Set64(e.Bytes)
		}
	case hub.EventVerify:
		if bar := b.bars[e.File]; bar != nil {
			bar.Describe(e.File + " (verifying)")
			_ = bar.Set64(e.Bytes)
		}
	case hub.EventDone:
		if bar := b.bars[e.File]; bar != nil {
			bar.Describe(e.File)
			_ = bar.Finish()
			delete(b.bars, e.File)
		}
	case hub.EventCached:
		fmt.Fprintf(b.w, "%s (cached)\n", e.File)
	}
}

func (b *barRenderer) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for f, bar := range b.bars {
		_ = bar.Exit()
		fmt.Fprintln(b.w)
		delete(b.bars, f)
	}
}
