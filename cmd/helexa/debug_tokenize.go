package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/safetensors"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// debugTokenizeOptions are the flags of `helexa debug tokenize`.
type debugTokenizeOptions struct {
	Model        string
	AddSpecial   bool
	ParseSpecial bool
	JSON         bool
}

func newDebugTokenizeCmd(s streams) *cobra.Command {
	opts := &debugTokenizeOptions{}
	cmd := &cobra.Command{
		Use:   "tokenize MODEL",
		Short: "Tokenize the text on stdin with a model's vocabulary (vocab-only GGUFs work too)",
		Long: "MODEL is a .gguf file, a Hugging Face tokenizer.json (tokenizer_config.json is read from beside it) or a\n" +
			"directory holding one. Reads UTF-8 text from stdin, exactly as given (a trailing newline is part of the text),\n" +
			"and prints one \"id<TAB>piece\" line per token (the piece is the text the token stands for), or {\"ids\":[...]} with --json.\n" +
			"--add-special adds BOS/EOS as the vocabulary asks; --parse-special turns special and added tokens written in\n" +
			"the text (e.g. <|im_end|>, <think>) into their ids; without it they are tokenized as plain text.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runDebugTokenize(cmd.Context(), *opts, s)
		},
	}
	cmd.Flags().BoolVar(&opts.AddSpecial, "add-special", false, "add BOS/EOS as the vocabulary's add_bos/add_eos say")
	cmd.Flags().BoolVar(&opts.ParseSpecial, "parse-special", false, "recognise special and added tokens (<|im_end|>, <think>) written in the text")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"ids":[...]} instead of one "id<TAB>piece" line per token`)
	return cmd
}

// loadTokenizer builds the tokenizer of a GGUF file, of a Hugging Face
// tokenizer.json (with the tokenizer_config.json beside it, if any), or of a
// directory holding a tokenizer.json.
func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		tj := filepath.Join(path, "tokenizer.json")
		if _, err := os.Stat(tj); err != nil {
			return nil, fmt.Errorf("%s has no tokenizer.json: give a .gguf file, a tokenizer.json or a directory holding one", path)
		}
		path = tj
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return loadHFTokenizer(path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return tokenizer.FromGGUF(f)
}

// loadHFTokenizer reads a tokenizer.json and the tokenizer_config.json in
// the same directory (optional), each a regular file within the caps a
// model directory's side files have.
func loadHFTokenizer(path string) (*tokenizer.Tokenizer, error) {
	tok, err := fsutil.ReadRegular(path, safetensors.MaxTokenizerBytes)
	if err != nil {
		return nil, err
	}
	cfg, err := fsutil.ReadRegular(filepath.Join(filepath.Dir(path), "tokenizer_config.json"), safetensors.MaxTokenizerConfigBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t, err := tokenizer.FromHF(tok, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func runDebugTokenize(ctx context.Context, opts debugTokenizeOptions, s streams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tk, err := loadTokenizer(opts.Model)
	if err != nil {
		return modelError("debug tokenize", opts.Model, err)
	}
	text, err := io.ReadAll(s.In)
	if err != nil {
		return fmt.Errorf("debug tokenize: reading stdin: %w", err)
	}
	ids, err := tk.Encode(string(text), opts.AddSpecial, opts.ParseSpecial)
	if err != nil {
		return fmt.Errorf("debug tokenize: %w", err)
	}
	if opts.JSON {
		if ids == nil {
			ids = []int32{}
		}
		return json.NewEncoder(s.Out).Encode(struct {
			IDs []int32 `json:"ids"`
		}{ids})
	}
	for _, id := range ids {
		if _, err := fmt.Fprintf(s.Out, "%d\t%q\n", id, tk.Piece(id, true)); err != nil {
			return err
		}
	}
	return nil
}

// debugDetokenizeOptions are the flags of `helexa debug detokenize`.
type debugDetokenizeOptions struct {
	Model   string
	IDs     string
	Special bool
}

func newDebugDetokenizeCmd(s streams) *cobra.Command {
	opts := &debugDetokenizeOptions{}
	cmd := &cobra.Command{
		Use:   "detokenize MODEL --ids 1,2,3",
		Short: "Print the text of token ids with a model's vocabulary (exactly, nothing added)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			return runDebugDetokenize(cmd.Context(), *opts, s)
		},
	}
	cmd.Flags().StringVar(&opts.IDs, "ids", "", "token ids separated by commas or spaces (required)")
	cmd.Flags().BoolVar(&opts.Special, "special", false, "render control tokens such as <|im_end|> as text")
	return cmd
}

// parseIDList reads "1,2, 3" or "1 2 3".
func parseIDList(s string, vocab int) ([]int32, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return nil, errors.New("--ids is empty: give token ids such as --ids 9707,1879")
	}
	ids := make([]int32, len(fields))
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--ids: %q is not a token id (want integers separated by commas)", f)
		}
		if n < 0 || int(n) >= vocab {
			return nil, fmt.Errorf("--ids: %d is outside the vocabulary (0..%d)", n, vocab-1)
		}
		ids[i] = int32(n)
	}
	return ids, nil
}

func runDebugDetokenize(ctx context.Context, opts debugDetokenizeOptions, s streams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tk, err := loadTokenizer(opts.Model)
	if err != nil {
		return modelError("debug detokenize", opts.Model, err)
	}
	ids, err := parseIDList(opts.IDs, tk.VocabSize())
	if err != nil {
		return fmt.Errorf("debug detokenize: %w", err)
	}
	_, err = io.WriteString(s.Out, tk.DecodeWith(ids, tokenizer.DecodeOptions{Special: opts.Special}))
	return err
}
