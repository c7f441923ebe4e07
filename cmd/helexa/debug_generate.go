package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// debugGenerateOptions are the flags of `helexa debug generate`.
type debugGenerateOptions struct {
	Model      string
	Tokens     string
	NumPredict int
	Chunk      int
	Threads    int
	TP         int
	JSON       bool
}

func newDebugGenerateCmd(s streams) *cobra.Command {
	opts := &debugGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate MODEL.gguf --tokens 1,2,3 -n N",
		Short: "Greedily continue a token sequence by N tokens (never stops at EOS)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runDebugGenerate(cmd.Context(), *opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Tokens, "tokens", "", "comma-separated prompt token ids (required)")
	addNumPredictFlag(cmd, &opts.NumPredict, 32, "number of tokens to generate", "n")
	bindEngineFlags(cmd, &opts.Chunk, &opts.Threads)
	bindTPFlag(cmd, &opts.TP)
	f.BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	return cmd
}

func runDebugGenerate(ctx context.Context, opts debugGenerateOptions, s streams) error {
	tokens, err := parseTokenIDs(opts.Tokens)
	if err != nil {
		return err
	}
	if opts.NumPredict < 0 {
		return fmt.Errorf("-n %d: must be zero or more", opts.NumPredict)
	}
	what := fmt.Sprintf("%d prompt tokens + -n %d", len(tokens), opts.NumPredict)
	sess, closeAll, err := openDebugSession(ctx, opts.Model, len(tokens)+opts.NumPredict, what, debugEngine{chunk: opts.Chunk, threads: opts.Threads, tp: opts.TP})
	if err != nil {
		return err
	}
	defer closeAll()
	out, err := sess.Generate(ctx, tokens, opts.NumPredict)
	if err != nil {
		return fmt.Errorf("debug generate: %w", err)
	}
	if out == nil {
		out = []int32{}
	}
	if opts.JSON {
		return json.NewEncoder(s.Out).Encode(struct {
			Tokens []int32 `json:"tokens"`
		}{out})
	}
	ids := make([]string, len(out))
	for i, t := range out {
		ids[i] = fmt.Sprint(t)
	}
	_, err = fmt.Fprintln(s.Out, strings.Join(ids, " "))
	return err
}
