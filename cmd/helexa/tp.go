package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/pkg/engine"
)

// tpOptions are the flags of `helexa tp`: run's, plus the split.
type tpOptions struct {
	Run     runOptions
	Devices string
}

func newTPCmd(s streams) *cobra.Command {
	var opts tpOptions
	cmd := &cobra.Command{
		Use:   "tp MODEL --size N [PROMPT...]",
		Short: "Like run, with the model split over N tensor-parallel ranks",
		Long: `Chat with a model, or answer one prompt, with the model split over N
tensor-parallel ranks: rank 0 in this process (or in the daemon's runner when
a daemon answers at HELEXA_HOST), ranks 1..N-1 in worker processes of this
binary. Each rank holds 1/N of the attention heads and of the FFN, and the
ranks sum their partial results after each attention and FFN block. Every
flag of run works the same way here.

Allowed sizes: N must divide the model's attention heads and its FFN width,
and either divide its KV heads (each rank keeps its own) or be a multiple of
them (ranks sharing a KV head each keep a copy). Qwen3-0.6B (16 heads, 8 KV
heads, FFN 3072) and Llama-3.2-1B (32 heads, 8 KV heads, FFN 8192) both allow
1, 2, 4, 8 and 16. An impossible size is refused with the sizes the model
allows; helexa debug info MODEL lists them too.

Devices: --devices cpu (the default) runs every rank on the CPU, each with
its share of HELEXA_NUM_THREADS (all cores divided by N when unset): on a
2-core machine --size 2 runs one thread per rank. GPU ranks need the CUDA
runner, which this build does not include.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("tp needs a MODEL: helexa tp MODEL --size N [PROMPT]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run.ThinkSet = cmd.Flags().Changed("think")
			opts.Run.Model, opts.Run.Prompt = args[0], args[1:]
			if err := checkTPFlags(opts); err != nil {
				return err
			}
			return runRun(cmd.Context(), opts.Run, s)
		},
	}
	bindRunFlags(cmd, &opts.Run)
	f := cmd.Flags()
	f.IntVar(&opts.Run.TP, "size", 2, fmt.Sprintf("number of tensor-parallel ranks (2 to %d)", engine.MaxTP))
	f.StringVar(&opts.Devices, "devices", "cpu", "where the ranks run: cpu")
	return cmd
}

func checkTPFlags(o tpOptions) error {
	if o.Run.TP < 1 || o.Run.TP > engine.MaxTP {
		return fmt.Errorf("--size %d: want 1 to %d ranks", o.Run.TP, engine.MaxTP)
	}
	if d := strings.ToLower(strings.TrimSpace(o.Devices)); d != "cpu" {
		return fmt.Errorf("--devices %q: this build runs ranks on the CPU only (--devices cpu); GPU ranks need the CUDA runner, which it does not include", o.Devices)
	}
	return nil
}
