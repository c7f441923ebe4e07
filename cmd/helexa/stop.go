package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/pkg/engine"
)

// stopOptions are the flags of `helexa stop`.
type stopOptions struct {
	Model string // the model to unload, as `ps` names it (name or path)
	Host  string // daemon address (default HELEXA_HOST)
}

func newStopCmd(s streams) *cobra.Command {
	var opts stopOptions
	cmd := &cobra.Command{
		Use:   "stop MODEL",
		Short: "Unload a model from the daemon",
		Long:  "Unload MODEL (its name or path as `helexa ps` shows it) from the daemon at HELEXA_HOST, freeing its memory (also how a poisoned model is recovered).\nTo stop the daemon itself, use `helexa serve --stop`.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("stop takes one model name; `helexa ps` lists the loaded models (to stop the daemon itself: `helexa serve --stop`)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runStop(cmd.Context(), opts, s)
		},
	}
	addHostFlag(cmd, &opts.Host)
	return cmd
}

func runStop(ctx context.Context, opts stopOptions, s streams) error {
	model := engine.CanonicalName(opts.Model)
	c, loaded, err := daemonPS(ctx, opts.Host)
	if err != nil {
		return err
	}
	name := ""
	for _, m := range loaded {
		if m.Name == model || (m.Path != "" && m.Path == model) {
			name = m.Name
			break
		}
	}
	if name == "" {
		return fmt.Errorf("model %q is not loaded; `helexa ps` lists the loaded models", model)
	}
	if err := c.Unload(ctx, name); err != nil {
		return daemonError(c, err)
	}
	_, err = fmt.Fprintf(s.Out, "unloaded %s\n", name)
	return err
}
