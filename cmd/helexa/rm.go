package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// rmOptions are the flags of `helexa rm`.
type rmOptions struct {
	Refs     []string // the MODEL arguments
	CacheDir string
}

func newRmCmd(s streams) *cobra.Command {
	var opts rmOptions
	cmd := &cobra.Command{
		Use:   "rm MODEL...",
		Short: "Remove models from the local cache",
		Long: `Remove a model from the Hugging Face cache: with a quant (org/repo:Q8_0) only
that quant's files, otherwise the whole snapshot of the revision (default main).
Blobs that no other snapshot uses are deleted.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return runRm(cmd.Context(), opts, s)
		},
	}
	addCacheDirFlag(cmd, &opts.CacheDir)
	return cmd
}

func runRm(ctx context.Context, opts rmOptions, s streams) error {
	client, err := newHubClient(opts.CacheDir, nil)
	if err != nil {
		return err
	}
	for _, ref := range opts.Refs {
		if err := client.Remove(ctx, ref); err != nil {
			return modelError("rm", ref, err)
		}
		fmt.Fprintf(s.Out, "removed %s\n", ref)
	}
	return nil
}
