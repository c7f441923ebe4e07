// Command helexa is a local LLM runner: pull models from Hugging Face, chat
// with them in the terminal, and serve them over an OpenAI-compatible API.
// Each subcommand lives in its own file and only parses flags and calls pkg/.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
