package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/humanize"
)

// listOptions are the flags of `helexa list`.
type listOptions struct {
	JSON     bool
	CacheDir string
}

func newListCmd(s streams) *cobra.Command {
	var opts listOptions
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the models in the local Hugging Face cache",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), opts, s)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the models as JSON")
	addCacheDirFlag(cmd, &opts.CacheDir)
	return cmd
}

func runList(ctx context.Context, opts listOptions, s streams) error {
	client, err := newHubClient(opts.CacheDir, nil)
	if err != nil {
		return err
	}
	models, err := client.List(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		if models == nil {
			_, err := fmt.Fprintln(s.Out, "[]")
			return err
		}
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(models)
	}
	if len(models) == 0 {
		_, err := fmt.Fprintf(s.Out, "no models in %s (pull one with `helexa pull org/repo[:QUANT]`)\n", client.CacheDir())
		return err
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tFORMAT\tSIZE\tREVISION\tMODIFIED")
	for _, m := range models {
		format := m.Format
		if m.Quant != "" {
			format += " " + m.Quant
		}
		rev := m.Revision
		if len(m.Commit) >= 12 {
			rev = fmt.Sprintf("%s (%s)", orDash(rev), m.Commit[:12])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Ref, format, humanize.Bytes(m.Size), rev, m.Modified.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
