package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
)

// psOptions are the flags of `helexa ps`.
type psOptions struct {
	Host    string // daemon address (default: see pickDaemon)
	JSON    bool
	Verbose bool // say which daemon is asked, and why that one
}

func newPsCmd(s streams) *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the models the daemon has loaded",
		Long: `List the models loaded by the daemon: size (weights + KV), processor,
context, state (loading, ready or poisoned), active requests (running and
queued) and when an idle model will be unloaded. A local model file is
named by its file name (--json gives the full path).

The daemon asked is the one at --host, else at HELEXA_HOST, else the one
` + "`helexa serve --detach`" + ` started (its pid file records the address), else
at 127.0.0.1:13131.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPs(cmd.Context(), opts, s)
		},
	}
	addHostFlag(cmd, &opts.Host)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the models as JSON")
	addVerboseDaemonFlag(cmd, &opts.Verbose)
	return cmd
}

// daemonPS connects to the daemon pickDaemon chooses (named on verbose,
// when not nil) and lists the models it has loaded.
func daemonPS(ctx context.Context, host string, verbose io.Writer) (*api.Client, []engine.ModelStatus, error) {
	c, t, err := daemonClient(host, verbose)
	if err != nil {
		return nil, nil, err
	}
	models, err := c.PS(ctx)
	if err != nil {
		return nil, nil, daemonError(t, c, err)
	}
	return c, models, nil
}

func runPs(ctx context.Context, opts psOptions, s streams) error {
	_, models, err := daemonPS(ctx, opts.Host, verboseTo(opts.Verbose, s.Err))
	if err != nil {
		return err
	}
	if opts.JSON {
		if models == nil {
			models = []engine.ModelStatus{}
		}
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(models)
	}
	return printPs(s.Out, models, time.Now())
}

func printPs(w io.Writer, models []engine.ModelStatus, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	names := psNames(models)
	fmt.Fprintln(tw, "NAME\tSIZE\tPROCESSOR\tRUNNER\tCONTEXT\tSTATE\tACTIVE\tUNTIL")
	for i, m := range models {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", names[i], humanize.Bytes(m.SizeBytes), orDash(m.Processor),
			runnerColumn(m.RunnerPID), m.Context, m.State, m.Active, until(m, now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, m := range models {
		if err := printRanks(w, names[i], m); err != nil {
			return err
		}
	}
	for i, m := range models {
		if m.State == engine.StatePoisoned {
			if _, err := fmt.Fprintf(w, "\n%s is poisoned: %s\n  the next request for it loads it again (or unload it: helexa stop %s)\n",
				names[i], orDash(m.Error), strconv.Quote(names[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// psNames are the names ps shows: a model loaded from a local path by
// its file (or directory) name, unless another loaded model has the same
// one; a reference as it is.
func psNames(models []engine.ModelStatus) []string {
	count := map[string]int{}
	for _, m := range models {
		count[shortName(m.Name)]++
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
		if s := shortName(m.Name); count[s] == 1 {
			names[i] = s
		}
	}
	return names
}

// shortName is a local model's file or directory name; a reference is
// left as it is.
func shortName(name string) string {
	if filepath.IsAbs(name) {
		return filepath.Base(name)
	}
	return name
}

// printRanks lists the ranks of a tensor-parallel model under the table.
func printRanks(w io.Writer, name string, m engine.ModelStatus) error {
	if len(m.Ranks) == 0 {
		return nil
	}
	parts := make([]string, len(m.Ranks))
	for i, r := range m.Ranks {
		parts[i] = fmt.Sprintf("rank %d: %s pid %d", r.Rank, r.Device, r.PID)
	}
	_, err := fmt.Fprintf(w, "\n%s ranks: %s\n", name, strings.Join(parts, ", "))
	return err
}

// runnerColumn names where a model runs: its runner process, or the
// daemon's own process.
func runnerColumn(pid int) string {
	if pid == 0 {
		return "in-process"
	}
	return "pid " + strconv.Itoa(pid)
}

// until says when an idle model will be unloaded.
func until(m engine.ModelStatus, now time.Time) string {
	switch {
	case m.State == engine.StateLoading:
		return "-"
	case m.ExpiresAt.IsZero() && m.Active > 0:
		return "in use"
	case m.ExpiresAt.IsZero():
		return "forever"
	}
	d := m.ExpiresAt.Sub(now).Round(time.Second)
	if d <= 0 {
		return "now"
	}
	return d.String() + " from now"
}
