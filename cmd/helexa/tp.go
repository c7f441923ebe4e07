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
	Run runOptions
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

Sizes: --size is 2 to 16 (default 2); one rank is helexa run.

Devices: every rank runs on the CPU (--device cpu, the default), each with
its share of HELEXA_NUM_THREADS (all cores divided by N when unset): on a
2-core machine --size 2 runs one thread per rank. GPU ranks are not
supported: the CUDA runner refuses a split (run the whole model on one GPU
with helexa run --device cuda).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("tp needs a MODEL: helexa tp MODEL --size N [PROMPT]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run.ThinkSet = cmd.Flags().Changed("think")
			opts.Run.Model, opts.Run.Prompt = args[0], args[1:]
			if err := checkTPFlags(&opts); err != nil {
				return err
			}
			return runRun(cmd.Context(), opts.Run, s)
		},
	}
	bindRunFlags(cmd, &opts.Run)
	f := cmd.Flags()
	f.IntVar(&opts.Run.TP, "size", 2, fmt.Sprintf("number of tensor-parallel ranks (%d to %d)", minTPSize, engine.MaxTP))
	f.Lookup("device").Usage = "where the ranks run: cpu, the only device tp supports (default cpu)"
	// --devices is the flag's earlier name, kept hidden for old scripts.
	f.StringVar(&opts.Run.Device, "devices", "", "old name of --device")
	_ = f.MarkHidden("devices")
	return cmd
}

// minTPSize is the smallest split: one rank is helexa run.
const minTPSize = 2

// checkTPFlags checks --size and --device, and pins the ranks to the CPU
// (auto would pick a GPU, which cannot split a model).
func checkTPFlags(o *tpOptions) error {
	err := firstOutOfRange([]flagRange{{Flag: "--size", Value: fmt.Sprint(o.Run.TP), OK: o.Run.TP >= minTPSize && o.Run.TP <= engine.MaxTP,
		Want: fmt.Sprintf("%d to %d ranks (one rank is helexa run)", minTPSize, engine.MaxTP)}})
	if err != nil {
		return err
	}
	switch d := strings.ToLower(strings.TrimSpace(o.Run.Device)); d {
	case "", "auto", "cpu":
		o.Run.Device = "cpu"
		return nil
	}
	return fmt.Errorf("--device %s: tp runs its ranks on the CPU only (--device cpu); the CUDA runner does not split a model, so run it on one GPU with `helexa run --device %s`", o.Run.Device, o.Run.Device)
}
