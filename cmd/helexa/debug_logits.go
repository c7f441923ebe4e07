package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/sampling"
)

// debugLogitsOptions are the flags of `helexa debug logits`.
type debugLogitsOptions struct {
	Model   string
	Tokens  string
	Top     int
	Chunk   int
	Threads int
	TP      int
	JSON    bool
}

func newDebugLogitsCmd(s streams) *cobra.Command {
	opts := &debugLogitsOptions{}
	cmd := &cobra.Command{
		Use:   "logits MODEL.gguf --tokens 1,2,3",
		Short: "Print the model's next-token logits at every position of a token sequence",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runDebugLogits(cmd.Context(), *opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Tokens, "tokens", "", "comma-separated input token ids (required)")
	f.IntVar(&opts.Top, "top", 10, "how many of the largest logits to print per position")
	bindEngineFlags(cmd, &opts.Chunk, &opts.Threads)
	bindTPFlag(cmd, &opts.TP)
	f.BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	return cmd
}

// bindTPFlag adds --tp, the tensor-parallel ranks a debug command splits
// the model over.
func bindTPFlag(cmd *cobra.Command, tp *int) {
	cmd.Flags().IntVar(tp, "tp", 1, "split the model over this many tensor-parallel ranks (worker processes; see helexa tp --help)")
}

// bindEngineFlags adds the --chunk and --threads flags shared by the debug
// commands that run a model, defaulting to HELEXA_CHUNK_SIZE and
// HELEXA_NUM_THREADS. A malformed variable fails the command (as it fails
// run and serve) unless the flag that overrides it is given.
func bindEngineFlags(cmd *cobra.Command, chunk, threads *int) {
	defChunk, chunkErr := envvars.ChunkSize.Int()
	defThreads, threadsErr := envvars.NumThreads.Int()
	f := cmd.Flags()
	f.IntVar(chunk, "chunk", defChunk, "prefill chunk size in tokens (env "+envvars.ChunkSize.Name+")")
	f.IntVarP(threads, "threads", "t", defThreads, "CPU threads, 0 = all cores (env "+envvars.NumThreads.Name+")")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if chunkErr != nil && !f.Changed("chunk") {
			return fmt.Errorf("%w (or pass --chunk)", chunkErr)
		}
		if threadsErr != nil && !f.Changed("threads") {
			return fmt.Errorf("%w (or pass --threads)", threadsErr)
		}
		return nil
	}
}

// logitsReport is the JSON `debug logits` prints.
type logitsReport struct {
	Tokens     []int32       `json:"tokens"`
	Positions  []positionTop `json:"positions"`
	LastLogits []float32     `json:"last_logits"`
}

type positionTop struct {
	Top [][2]any `json:"top"` // [id, logit]
}

func runDebugLogits(ctx context.Context, opts debugLogitsOptions, s streams) error {
	tokens, err := parseTokenIDs(opts.Tokens)
	if err != nil {
		return err
	}
	if opts.Top < 0 {
		return fmt.Errorf("--top %d: must be zero or more", opts.Top)
	}
	sess, closeAll, err := openDebugSession(ctx, opts.Model, len(tokens), fmt.Sprintf("%d tokens", len(tokens)),
		debugEngine{chunk: opts.Chunk, threads: opts.Threads, tp: opts.TP})
	if err != nil {
		return err
	}
	defer closeAll()
	res, err := sess.Prefill(ctx, tokens, executor.LogitsAll)
	if err != nil {
		return fmt.Errorf("debug logits: %w", err)
	}
	rep := logitsReport{Tokens: tokens, LastLogits: res.Logits[len(res.Logits)-1]}
	for _, l := range res.Logits {
		rep.Positions = append(rep.Positions, positionTop{Top: topLogits(l, opts.Top)})
	}
	if opts.JSON {
		return json.NewEncoder(s.Out).Encode(rep)
	}
	return printLogits(s.Out, rep)
}

func printLogits(w io.Writer, rep logitsReport) error {
	for i, p := range rep.Positions {
		parts := make([]string, len(p.Top))
		for j, t := range p.Top {
			parts[j] = fmt.Sprintf("%d:%.4f", t[0], t[1])
		}
		if _, err := fmt.Fprintf(w, "pos %d token %d → %s\n", i, rep.Tokens[i], strings.Join(parts, " ")); err != nil {
			return err
		}
	}
	return nil
}

// topLogits returns the n largest logits as [id, logit], largest first,
// ties to the lower id.
func topLogits(logits []float32, n int) [][2]any {
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	out := make([][2]any, min(n, len(idx)))
	for i := range out {
		out[i] = [2]any{idx[i], logits[idx[i]]}
	}
	return out
}

// parseTokenIDs parses "1,2,3".
func parseTokenIDs(s string) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--tokens is required: give comma-separated token ids, e.g. --tokens 1,2,3")
	}
	var out []int32
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--tokens %q: entry %d is empty (a stray comma?); want comma-separated token ids, e.g. 1,2,3", s, i+1)
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("--tokens: %q is not a token id (want comma-separated non-negative integers)", f)
		}
		out = append(out, int32(v))
	}
	return out, nil
}

// openDebugSession loads a model with a KV pool just big enough for ctxLen
// positions (what describes them, for the error when they exceed the
// model's context length) and opens a greedy session on it.
func openDebugSession(ctx context.Context, model string, ctxLen int, what string, eng debugEngine) (*executor.Session, func(), error) {
	if eng.chunk < 0 {
		return nil, nil, fmt.Errorf("--chunk %d: must be positive (0 = default)", eng.chunk)
	}
	if eng.threads < 0 {
		return nil, nil, fmt.Errorf("--threads %d: must be zero (all cores) or more", eng.threads)
	}
	if eng.tp < 0 || eng.tp > engine.MaxTP {
		return nil, nil, fmt.Errorf("--tp %d: want 1 to %d ranks", eng.tp, engine.MaxTP)
	}
	nCtx, err := trainContext(model)
	if err != nil {
		return nil, nil, err
	}
	if ctxLen > nCtx {
		return nil, nil, fmt.Errorf("%s = %d positions exceed the model's context length of %d tokens", what, ctxLen, nCtx)
	}
	const blockSize = 16
	opts := executor.LoadOptions{NumCtx: ctxLen, BlockSize: blockSize, NumBlocks: (ctxLen + blockSize - 1) / blockSize,
		ChunkSize: eng.chunk, Threads: eng.threads}
	var ex executor.Executor
	if eng.tp > 1 {
		opts.TP = eng.tp
		ex, err = loadTP(ctx, model, opts, filepath.Base(model), nil)
	} else {
		ex, err = local.Load(ctx, model, local.Options{LoadOptions: opts})
	}
	if err != nil {
		return nil, nil, err
	}
	sess, err := executor.NewSession(ex, sampling.Params{})
	if err != nil {
		ex.Close()
		return nil, nil, err
	}
	return sess, func() { sess.Close(); ex.Close() }, nil
}

// debugEngine is how a debug command runs its model.
type debugEngine struct{ chunk, threads, tp int }

// trainContext reads the context length a model was trained with (its
// <arch>.context_length), failing as loading would for a file helexa
// cannot run.
func trainContext(model string) (int, error) {
	f, err := gguf.Open(model)
	if err != nil {
		return 0, modelError("loading", model, err)
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", model, err)
	}
	return m.HP.NCtxTrain, nil
}
