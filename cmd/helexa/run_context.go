package main

import (
	"fmt"
	"io"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/engine"
)

// ctxAsk is a context size the user asked for, and where.
type ctxAsk struct {
	N   int
	Via string // "--num-ctx" or "HELEXA_NUM_CTX"
}

// askedCtx is the context size the user asked for: --num-ctx, else
// HELEXA_NUM_CTX when set; zero when neither (the engine's default is no
// request of the user's, so it never draws a warning).
func askedCtx(flag int) ctxAsk {
	if flag > 0 {
		return ctxAsk{flag, "--num-ctx"}
	}
	if envvars.NumCtx.IsSet() {
		if n, err := envvars.NumCtx.Int(); err == nil && n > 0 {
			return ctxAsk{n, envvars.NumCtx.Name}
		}
	}
	return ctxAsk{}
}

// cappedWarning is the line run prints when the model got a smaller
// context than asked for ("" when it did not): a warning, not an error,
// because the model still runs with the most it has, and a
// HELEXA_NUM_CTX meant for large models must not stop small ones.
func cappedWarning(ask ctxAsk, got int, model string, d engine.ModelDetails) string {
	if ask.N == 0 || got == 0 || ask.N <= got {
		return ""
	}
	name := shortName(model)
	if d.ContextTrain > 0 && got >= d.ContextTrain {
		return fmt.Sprintf("warning: %s %d is more than %s was trained for: it runs with its trained context of %d tokens",
			ask.Via, ask.N, name, got)
	}
	return fmt.Sprintf("warning: %s %d: %s runs with a context of %d tokens (a daemon does not reload a model in use for a larger context)",
		ask.Via, ask.N, name, got)
}

// atTrainedMax reports a context as large as the model was trained for,
// where a larger --num-ctx cannot help.
func atTrainedMax(size int, d engine.ModelDetails) bool {
	return d.ContextTrain > 0 && size >= d.ContextTrain
}

// contextFullNote is what run prints after an answer the full context
// cut off: how to make room, which depends on whether the context can
// still grow.
func contextFullNote(u engine.Usage, d engine.ModelDetails) string {
	used := u.PromptTokens + u.CompletionTokens
	if atTrainedMax(u.Context, d) {
		return fmt.Sprintf("[the context is full (%d of %d tokens, the most this model was trained for): the answer was cut off; "+
			"cap its length with -n/--num-predict or shorten the prompt]", used, u.Context)
	}
	hint := "raise it with --num-ctx"
	if d.ContextTrain > u.Context {
		hint = fmt.Sprintf("raise it with --num-ctx (up to %d, what the model was trained for)", d.ContextTrain)
	}
	return fmt.Sprintf("[the context is full (%d of %d tokens): the answer was cut off; %s]", used, u.Context, hint)
}

// promptTooLong wraps the engine's "the prompt does not fit" error with
// what can help.
func promptTooLong(size int, d engine.ModelDetails, err error) error {
	if atTrainedMax(size, d) {
		return fmt.Errorf("the prompt does not fit the context of %d tokens, the most this model was trained for: shorten the prompt: %w", size, err)
	}
	return fmt.Errorf("the prompt does not fit the context (raise it with --num-ctx): %w", err)
}

// printCapped prints the capping warning, if any.
func printCapped(w io.Writer, ask ctxAsk, got int, model string, d engine.ModelDetails) {
	if line := cappedWarning(ask, got, model, d); line != "" {
		fmt.Fprintln(w, line)
	}
}
