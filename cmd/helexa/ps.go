package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
)

// psOptions are the flags of `helexa ps`.
type psOptions struct {
	Host string // daemon address (default HELEXA_HOST)
	JSON bool
}

func newPsCmd(s streams) *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the models the daemon has loaded",
		Long: `List the models loaded by the daemon at HELEXA_HOST: size (weights + KV),
processor, context, state (loading, ready, busy, poisoned), active requests
and when an idle model will be unloaded.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPs(cmd.Context(), opts, s)
		},
	}
	addHostFlag(cmd, &opts.Host)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the models as JSON")
	return cmd
}

// daemonClient returns a client for --host or HELEXA_HOST.
func daemonClient(host string) (*api.Client, error) {
	if host == "" {
		host = envvars.Host.Get()
	}
	return api.NewClient(host, envvars.APIKey.Get())
}

// daemonError rewrites "nobody answers" into advice.
func daemonError(c *api.Client, err error) error {
	if errors.Is(err, api.ErrUnreachable) {
		return fmt.Errorf("no helexa daemon answers at %s: start one with `helexa serve --detach` (or point HELEXA_HOST / --host at it)", c.Addr())
	}
	return err
}

// daemonPS connects to the daemon at host (or HELEXA_HOST) and lists the
// models it has loaded.
func daemonPS(ctx context.Context, host string) (*api.Client, []engine.ModelStatus, error) {
	c, err := daemonClient(host)
	if err != nil {
		return nil, nil, err
	}
	models, err := c.PS(ctx)
	if err != nil {
		return nil, nil, daemonError(c, err)
	}
	return c, models, nil
}

func runPs(ctx context.Context, opts psOptions, s streams) error {
	_, models, err := daemonPS(ctx, opts.Host)
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
	fmt.Fprintln(tw, "NAME\tSIZE\tPROCESSOR\tRUNNER\tCONTEXT\tSTATE\tACTIVE\tUNTIL")
	for _, m := range models {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", m.Name, humanize.Bytes(m.SizeBytes), orDash(m.Processor),
			runnerColumn(m.RunnerPID), m.Context, m.State, m.Active, until(m, now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range models {
		if err := printRanks(w, m); err != nil {
			return err
		}
	}
	for _, m := range models {
		if m.State == engine.StatePoisoned {
			if _, err := fmt.Fprintf(w, "\n%s is poisoned: %s\n  the next request for it loads it again (or unload it: helexa stop %s)\n",
				m.Name, orDash(m.Error), strconv.Quote(m.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printRanks lists the ranks of a tensor-parallel model under the table.
func printRanks(w io.Writer, m engine.ModelStatus) error {
	if len(m.Ranks) == 0 {
		return nil
	}
	parts := make([]string, len(m.Ranks))
	for i, r := range m.Ranks {
		parts[i] = fmt.Sprintf("rank %d: %s pid %d", r.Rank, r.Device, r.PID)
	}
	_, err := fmt.Fprintf(w, "\n%s ranks: %s\n", m.Name, strings.Join(parts, ", "))
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
