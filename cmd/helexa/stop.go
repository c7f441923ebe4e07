package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// stopOptions are the flags of `helexa stop`.
type stopOptions struct {
	Host string // daemon address (default HELEXA_HOST)
}

func newStopCmd(s streams) *cobra.Command {
	var opts stopOptions
	cmd := &cobra.Command{
		Use:   "stop MODEL",
		Short: "Unload a model from the daemon",
		Long:  "Unload MODEL from the daemon at HELEXA_HOST, freeing its memory (also how a poisoned model is recovered).\nTo stop the daemon itself, use `helexa serve --stop`.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStop(cmd.Context(), opts, args[0], s)
		},
	}
	cmd.Flags().StringVar(&opts.Host, "host", "", "daemon address (default $HELEXA_HOST or 127.0.0.1:13131)")
	return cmd
}

func runStop(ctx context.Context, opts stopOptions, model string, s streams) error {
	c, err := daemonClient(opts.Host)
	if err != nil {
		return err
	}
	if err := c.Unload(ctx, model); err != nil {
		return daemonError(c, err)
	}
	_, err = fmt.Fprintf(s.Out, "unloaded %s\n", model)
	return err
}
