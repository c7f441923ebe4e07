package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/pkg/engine"
)

// stopOptions are the flags of `helexa stop`.
type stopOptions struct {
	Model   string // the model to unload: as `ps` shows it, its name or path
	Host    string // daemon address (default: see pickDaemon)
	Verbose bool   // say which daemon is asked, and why that one
}

func newStopCmd(s streams) *cobra.Command {
	var opts stopOptions
	cmd := &cobra.Command{
		Use:   "stop MODEL",
		Short: "Unload a model from the daemon",
		Long: `Unload MODEL from the daemon, freeing its memory (also how a poisoned model
is recovered). MODEL is named as ` + "`helexa ps`" + ` shows it (a local file by its
file name), or by its full name or path. The daemon is picked as for ps.
To stop the daemon itself, use ` + "`helexa serve --stop`" + `.`,
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
	addVerboseDaemonFlag(cmd, &opts.Verbose)
	return cmd
}

func runStop(ctx context.Context, opts stopOptions, s streams) error {
	c, t, err := daemonClient(opts.Host, verboseTo(opts.Verbose, s.Err))
	if err != nil {
		return err
	}
	loaded, err := c.PS(ctx)
	if err != nil {
		return daemonError(t, c, err)
	}
	name, err := stopTarget(opts.Model, loaded)
	if err != nil {
		return err
	}
	if err := c.Unload(ctx, name); err != nil {
		return daemonError(t, c, err)
	}
	_, err = fmt.Fprintf(s.Out, "unloaded %s\n", shortName(name))
	return err
}

// stopTarget finds the loaded model arg names: its full name or path
// (a relative path is resolved), or the short name ps shows.
func stopTarget(arg string, loaded []engine.ModelStatus) (string, error) {
	canon := engine.CanonicalName(arg)
	for _, m := range loaded {
		if m.Name == arg || m.Name == canon || (m.Path != "" && (m.Path == arg || m.Path == canon)) {
			return m.Name, nil
		}
	}
	var matches []string
	for _, m := range loaded {
		if shortName(m.Name) == arg {
			matches = append(matches, m.Name)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("model %q is not loaded; `helexa ps` lists the loaded models", arg)
	}
	return "", fmt.Errorf("%q names %d loaded models; give the full path: %s", arg, len(matches), strings.Join(matches, ", "))
}
