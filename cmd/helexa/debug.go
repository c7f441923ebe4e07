package main

import "github.com/spf13/cobra"

// newDebugCmd groups the debug hooks used by tests, benchmarks and bug
// reports; each hook adds itself in its own file through debugSubcommands.
func newDebugCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "debug",
		Short: "Low-level hooks: logits, generation, tokenizer and template checks",
	}
	for _, add := range debugSubcommands() {
		cmd.AddCommand(add(s))
	}
	return cmd
}

// debugSubcommands lists the constructors of the debug hooks.
func debugSubcommands() []func(streams) *cobra.Command {
	return []func(streams) *cobra.Command{
		newDebugInfoCmd,
		newDebugLogitsCmd,
		newDebugGenerateCmd,
		newDebugTemplateCmd,
		newDebugTokenizeCmd,
		newDebugDetokenizeCmd,
		newDebugSynthCmd,
	}
}
