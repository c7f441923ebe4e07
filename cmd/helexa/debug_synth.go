package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/synth"
)

// debugSynthOptions are the flags of `helexa debug synth`.
type debugSynthOptions struct {
	Shape, Quant, Out, Vocab string
	Layers, Shrink           int
	Seed                     int64
}

func newDebugSynthCmd(s streams) *cobra.Command {
	var opts debugSynthOptions
	var names []string
	for _, sh := range synth.Shapes() {
		names = append(names, sh.Name)
	}
	cmd := &cobra.Command{
		Use:   "synth --shape NAME --quant q4_k_m|q8_0|f16|f32 -o FILE",
		Short: "Write a random-weight GGUF at a real model's shape (for benchmarks without a download)",
		Long: "Write a GGUF with random weights at the shape of " + strings.Join(names, ", ") +
			", the real tokenizer copied from the fixtures' vocabulary GGUF (or --vocab), and the weights quantized by helexa's\n" +
			"quantizers in llama-quantize's mix for the quant, so helexa and llama.cpp can be timed on the same file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDebugSynth(cmd.Context(), opts, s) },
	}
	f := cmd.Flags()
	f.StringVar(&opts.Shape, "shape", "", "model shape: "+strings.Join(names, ", "))
	f.StringVar(&opts.Quant, "quant", "q4_k_m", "weight types: q4_k_m, q8_0, f16 or f32")
	f.StringVarP(&opts.Out, "output", "o", "", "the GGUF file to write")
	f.StringVar(&opts.Vocab, "vocab", "", "vocabulary GGUF to copy the tokenizer from (default: the shape's file under $"+envvars.Fixtures.Name+")")
	f.IntVar(&opts.Layers, "layers", 0, "override the layer count (quick tests)")
	f.IntVar(&opts.Shrink, "shrink", 1, "divide the hidden and FFN widths and the head counts by this (quick tests)")
	f.Int64Var(&opts.Seed, "seed", 1, "random seed of the weights")
	_ = cmd.MarkFlagRequired("shape")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func runDebugSynth(_ context.Context, opts debugSynthOptions, s streams) error {
	sh, err := synth.ShapeNamed(opts.Shape)
	if err != nil {
		return err
	}
	vocabPath := opts.Vocab
	if vocabPath == "" {
		dir := envvars.Fixtures.Get()
		if dir == "" {
			return fmt.Errorf("--vocab is needed (or set %s to the fixtures directory holding %s)", envvars.Fixtures.Name, sh.VocabFile)
		}
		vocabPath = filepath.Join(dir, sh.VocabFile)
	}
	v, err := gguf.Open(vocabPath)
	if err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	defer v.Close()
	if opts.Shrink < 1 || opts.Layers < 0 {
		return fmt.Errorf("--shrink %d --layers %d: want --shrink >= 1 and --layers >= 0", opts.Shrink, opts.Layers)
	}
	if err := synth.Write(opts.Out, synth.Options{Shape: sh, Quant: strings.ToLower(opts.Quant), Vocab: v,
		Layers: opts.Layers, Shrink: opts.Shrink, Seed: uint64(opts.Seed)}); err != nil {
		return fmt.Errorf("writing %s: %w", opts.Out, err)
	}
	_, err = fmt.Fprintf(s.Out, "wrote %s (%s, %s)\n", opts.Out, sh.Name, opts.Quant)
	return err
}
