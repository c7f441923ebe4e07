// Command helexa is a local LLM runner: pull models from Hugging Face, chat
// with them in the terminal, and serve them over an OpenAI-compatible API.
// Each subcommand lives in its own file and only parses flags and calls pkg/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	os.Exit(exitCode(ctx, root.ExecuteContext(ctx), os.Stderr))
}

// exitCode reports err and picks the exit status: 0 on success, 130 (like a
// shell) when Ctrl+C or SIGTERM cancelled the command — quietly, since the
// user asked for it — and 1 for any other error.
func exitCode(ctx context.Context, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return 130
	default:
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
}
