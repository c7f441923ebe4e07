// Command helexa is a local LLM runner: pull models from Hugging Face, chat
// with them in the terminal, and serve them over an OpenAI-compatible API.
// Each subcommand lives in its own file and only parses flags and calls pkg/.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	cmd, err := root.ExecuteContextC(ctx)
	os.Exit(exitStatus(ctx, err, os.Stderr, verboseErrors(cmd)))
}

// exitCode is exitStatus, verbose only at HELEXA_LOG_LEVEL=debug.
func exitCode(ctx context.Context, err error, stderr io.Writer) int {
	return exitStatus(ctx, err, stderr, verboseErrors(nil))
}

// verboseErrors says whether an error's underlying causes are shown: the
// command's --verbose is on, or HELEXA_LOG_LEVEL is debug.
func verboseErrors(cmd *cobra.Command) bool {
	if logLevel(slog.LevelInfo) <= slog.LevelDebug {
		return true
	}
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("verbose")
	return f != nil && f.Value.String() == "true"
}
