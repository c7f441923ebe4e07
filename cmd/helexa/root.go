package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
)

// streams are the I/O a command uses; tests pass buffers.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// newRootCmd wires every subcommand. Each subcommand follows one pattern: an
// options struct, a newXxxCmd(streams) constructor that binds flags to it,
// and a runXxx(ctx, opts, streams) function that does the work.
func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "helexa",
		Short: "Run large language models locally",
		Long: "helexa pulls models from Hugging Face, chats with them in the terminal and serves them over an OpenAI-compatible API.\n\n" +
			"Start with `helexa run MODEL`; `helexa help environment` lists the environment variables it reads.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			setupLogging(s.Err)
		},
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(flagError)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	for _, add := range subcommands() {
		root.AddCommand(add(s))
	}
	return root
}

// subcommands lists the constructors of every top-level command.
func subcommands() []func(streams) *cobra.Command {
	return []func(streams) *cobra.Command{
		newDebugCmd,
		newPullCmd, newListCmd, newRmCmd,
		newServeCmd, newPsCmd, newStopCmd, newBenchCmd,
		newRunCmd, newRunnerCmd, newTPCmd, newWorkerCmd, newVersionCmd,
		newEnvironmentTopic,
	}
}

// newEnvironmentTopic is `helexa help environment`: a help topic (no Run)
// listing every variable a user may set, kept out of `helexa --help` so
// that the commands come first there.
func newEnvironmentTopic(streams) *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "The environment variables helexa reads",
		Long:  strings.TrimRight(envvars.Help(), "\n"),
	}
}

// setupLogging sends the default logger to w at HELEXA_LOG_LEVEL.
func setupLogging(w io.Writer) {
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: logLevel(slog.LevelInfo)})))
}

// logLevel is HELEXA_LOG_LEVEL (debug, info, warn, error; any case), or def
// when it is unset or not a level.
func logLevel(def slog.Level) slog.Level {
	if !envvars.LogLevel.IsSet() {
		return def
	}
	level := def
	if err := level.UnmarshalText([]byte(strings.TrimSpace(envvars.LogLevel.Get()))); err != nil {
		return def
	}
	return level
}
