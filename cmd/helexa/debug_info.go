package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// debugInfoOptions are the flags of `helexa debug info`.
type debugInfoOptions struct {
	Model string
	JSON  bool
}

func newDebugInfoCmd(s streams) *cobra.Command {
	opts := &debugInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info MODEL.gguf",
		Short: "Show a GGUF model's architecture, hyperparameters, tensor types, parameter count and size",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runDebugInfo(cmd.Context(), *opts, s)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	return cmd
}

// modelInfo is the summary `debug info` prints.
type modelInfo struct {
	Path            string         `json:"path"`
	Shards          []string       `json:"shards,omitempty"`
	FileSize        int64          `json:"file_size"`
	GGUFVersion     uint32         `json:"gguf_version"`
	Architecture    string         `json:"architecture"`
	FileType        string         `json:"file_type,omitempty"` // general.file_type by llama.cpp's name ("Q4_K_M")
	General         map[string]any `json:"general"`
	Hyperparameters map[string]any `json:"hyperparameters"`
	VocabSize       int            `json:"vocab_size,omitempty"`
	TensorCount     int            `json:"tensor_count"`
	QuantTypes      []quantCount   `json:"quant_types"`
	Parameters      int64          `json:"parameters"`
	// TPSizes are the tensor-parallel sizes helexa tp accepts (absent for
	// a file helexa cannot run).
	TPSizes []int `json:"tp_sizes,omitempty"`

	keys []string // general then hyperparameter keys, in file order
}

// quantCount is how many tensors (and bytes) use one type.
type quantCount struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
}

func runDebugInfo(ctx context.Context, opts debugInfoOptions, s streams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := gguf.Open(opts.Model)
	if err != nil {
		return modelError("debug info", opts.Model, err)
	}
	defer f.Close()
	info := summarizeGGUF(f)
	if m, err := arch.Load(f); err == nil {
		info.TPSizes = m.TPSizes(engine.MaxTP)
	}
	if opts.JSON {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	return printGGUFInfo(s.Out, info)
}

func summarizeGGUF(f *gguf.File) modelInfo {
	info := modelInfo{
		Path:            f.Path(),
		FileSize:        f.FileSize(),
		GGUFVersion:     f.Version(),
		Architecture:    f.Arch(),
		General:         map[string]any{},
		Hyperparameters: map[string]any{},
		TensorCount:     len(f.Tensors()),
	}
	if sh := f.Shards(); len(sh) > 1 {
		info.Shards = sh
	}
	if ft, err := f.Uint("general.file_type"); err == nil {
		info.FileType = fileTypeName(ft)
	}
	prefix := info.Architecture + "."
	for _, k := range f.Keys() {
		v, _ := f.Value(k)
		switch {
		case strings.HasPrefix(k, "general."):
			info.General[k] = infoJSONValue(v)
		case info.Architecture != "" && strings.HasPrefix(k, prefix):
			info.Hyperparameters[k] = infoJSONValue(v)
		default:
			continue
		}
		info.keys = append(info.keys, k)
	}
	if toks, err := f.Strings("tokenizer.ggml.tokens"); err == nil {
		info.VocabSize = len(toks)
	}
	byType := map[string]*quantCount{}
	for _, t := range f.Tensors() {
		info.Parameters += t.Elements()
		q := byType[t.Type.String()]
		if q == nil {
			q = &quantCount{Type: t.Type.String()}
			byType[q.Type] = q
		}
		q.Tensors++
		q.Bytes += t.Size
	}
	for _, q := range byType {
		info.QuantTypes = append(info.QuantTypes, *q)
	}
	sort.Slice(info.QuantTypes, func(i, j int) bool {
		a, b := info.QuantTypes[i], info.QuantTypes[j]
		if a.Tensors != b.Tensors {
			return a.Tensors > b.Tensors
		}
		return a.Type < b.Type
	})
	return info
}

// fileTypeName names a general.file_type value (llama.cpp's llama_ftype) the
// way quant suffixes of GGUF file names do.
func fileTypeName(ft uint64) string {
	names := [...]string{
		0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
		10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
		16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
		22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
		28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
		37: "TQ2_0", 38: "MXFP4_MOE",
	}
	if ft < uint64(len(names)) && names[ft] != "" {
		return names[ft]
	}
	return fmt.Sprintf("unknown (%d)", ft)
}

// maxShownArray is the longest array printed whole; longer ones are summarised.
const maxShownArray = 32

// infoJSONValue turns a metadata value into something encoding/json accepts
// (non-finite floats become strings, long arrays a summary string).
func infoJSONValue(v gguf.Value) any {
	switch x := v.V.(type) {
	case float32:
		return infoFinite(float64(x), 32)
	case float64:
		return infoFinite(x, 64)
	case []any:
		if len(x) > maxShownArray {
			return fmt.Sprintf("[%d × %s]", len(x), v.Elem)
		}
		out := make([]any, len(x))
		for i, e := range x {
			if inner, ok := e.(gguf.Value); ok {
				out[i] = infoJSONValue(inner)
			} else {
				out[i] = infoJSONValue(gguf.Value{Type: v.Elem, V: e})
			}
		}
		return out
	}
	return v.V
}

func infoFinite(x float64, bits int) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, bits)
	}
	if bits == 32 {
		// Print the shortest float32 form (1e-05, not 9.999999747378752e-06).
		y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', -1, 32), 64)
		return y
	}
	return x
}

func printGGUFInfo(w io.Writer, info modelInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	arch := info.Architecture
	if arch == "" {
		arch = "(none: general.architecture missing)"
	}
	fmt.Fprintf(tw, "file\t%s\n", info.Path)
	for i, sh := range info.Shards {
		fmt.Fprintf(tw, "shard %d\t%s\n", i+1, sh)
	}
	fmt.Fprintf(tw, "size\t%s (%d bytes)\n", humanize.Bytes(info.FileSize), info.FileSize)
	fmt.Fprintf(tw, "format\tGGUF v%d\n", info.GGUFVersion)
	fmt.Fprintf(tw, "architecture\t%s\n", arch)
	if info.FileType != "" {
		fmt.Fprintf(tw, "file type\t%s\n", info.FileType)
	}
	fmt.Fprintf(tw, "parameters\t%s (%d)\n", humanize.Count(info.Parameters), info.Parameters)
	fmt.Fprintf(tw, "tensors\t%d\n", info.TensorCount)
	var types []string
	for _, q := range info.QuantTypes {
		types = append(types, fmt.Sprintf("%s×%d (%s)", q.Type, q.Tensors, humanize.Bytes(q.Bytes)))
	}
	fmt.Fprintf(tw, "tensor types\t%s\n", strings.Join(types, ", "))
	if info.VocabSize > 0 {
		fmt.Fprintf(tw, "vocab size\t%d\n", info.VocabSize)
	}
	if len(info.TPSizes) > 0 {
		sizes := make([]string, len(info.TPSizes))
		for i, n := range info.TPSizes {
			sizes[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(tw, "tp sizes\t%s\n", strings.Join(sizes, ", "))
	}
	fmt.Fprintln(tw, "metadata\t")
	for _, k := range info.keys {
		v, ok := info.General[k]
		if !ok {
			v = info.Hyperparameters[k]
		}
		fmt.Fprintf(tw, "  %s\t%s\n", k, infoFormatValue(v))
	}
	return tw.Flush()
}

func infoFormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = infoFormatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
