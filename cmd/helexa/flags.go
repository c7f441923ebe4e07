package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
)

// The flags several commands share are bound here, so one thing has one
// name, shorthand and help text everywhere.

// addHostFlag binds --host for the commands that talk to a daemon.
func addHostFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "host", "", fmt.Sprintf("daemon address host:port (default $%s, else the address the detached daemon recorded, else %s)", envvars.Host.Name, envvars.Host.Default))
}

// addVerboseDaemonFlag binds --verbose for the commands that only talk
// to a daemon: it names the daemon asked and why that one.
func addVerboseDaemonFlag(cmd *cobra.Command, dst *bool) {
	cmd.Flags().BoolVar(dst, "verbose", false, "say on stderr which daemon is asked and why that one (--host, $"+envvars.Host.Name+" or the detached daemon's pid file)")
}

// verboseTo is w when verbose is on, else nil (quiet).
func verboseTo(verbose bool, w io.Writer) io.Writer {
	if verbose {
		return w
	}
	return nil
}

// addCacheDirFlag binds --cache-dir for the commands that use the
// Hugging Face cache.
func addCacheDirFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "cache-dir", "", "Hugging Face cache root (default: the config file's hub_cache, $"+envvars.HFHubCache.Name+
		", $"+envvars.HFHome.Name+"/hub, $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub)")
}

// addDeviceFlag binds --device for the commands that run models.
func addDeviceFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "device", "", fmt.Sprintf("where models run: auto, cpu, cuda or cuda:N (default $%s or %s)",
		envvars.Device.Name, envvars.Device.Default))
}

// addNumCtxFlag binds --num-ctx for the commands that load a model.
func addNumCtxFlag(cmd *cobra.Command, dst *int) {
	cmd.Flags().IntVar(dst, "num-ctx", 0, fmt.Sprintf("context size in tokens (default $%s or %s, capped at the model's training context)",
		envvars.NumCtx.Name, envvars.NumCtx.Default))
}

// addNumPredictFlag binds -n/--num-predict, the number of tokens to
// generate. oldName, when set, is an earlier long name kept as a hidden
// alias (hidden rather than deprecated: cobra prints deprecation notices
// on stdout, which would spoil --json output).
func addNumPredictFlag(cmd *cobra.Command, dst *int, def int, usage, oldName string) {
	f := cmd.Flags()
	f.IntVarP(dst, "num-predict", "n", def, usage)
	if oldName != "" {
		f.IntVar(dst, oldName, def, usage+" (old name of -n/--num-predict)")
		_ = f.MarkHidden(oldName)
	}
}

// exactArgs is cobra.ExactArgs with an error that shows how to call the
// command.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		return argsError(cmd, args, "takes "+countArgs(n))
	}
}

// minArgs is cobra.MinimumNArgs with an error that shows how to call the
// command.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		return argsError(cmd, args, "takes at least "+countArgs(n))
	}
}

// noArgs is cobra.NoArgs with an error that shows how to call the command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return argsError(cmd, args, "takes no arguments")
}

func countArgs(n int) string {
	if n == 1 {
		return "one argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

func argsError(cmd *cobra.Command, args []string, want string) error {
	got := "none"
	if len(args) > 0 {
		got = fmt.Sprintf("%q", strings.Join(args, " "))
	}
	return fmt.Errorf("`%s` %s, got %s: usage is `%s` (see `%s --help`)", cmd.CommandPath(), want, got, cmd.UseLine(), cmd.CommandPath())
}
