package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

func runDebugCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	root.SetArgs(append([]string{"debug"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestDebugTokenizeJSON(t *testing.T) {
	vocab := fixtures.Path(t, "tokenizer", "vocab-qwen3.gguf")
	tests := []struct {
		name string
		args []string
		in   string
		want []int32
	}{
		{"plain", nil, "Hello world", []int32{9707, 1879}},
		{"special as text", nil, "<|im_end|>", []int32{27, 91, 318, 6213, 91, 29}},
		{"parse special", []string{"--parse-special"}, "<|im_end|>", []int32{151645}},
		{"user-defined in plain text", nil, "<think>", []int32{151667}},
		{"parse added", []string{"--parse-special"}, "<think>", []int32{151667}},
		{"empty", nil, "", []int32{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runDebugCmd(t, tc.in, append([]string{"tokenize", vocab, "--json"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ IDs []int32 }
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %q", err, out)
			}
			if got.IDs == nil || len(got.IDs) != len(tc.want) {
				t.Fatalf("ids %v, want %v", got.IDs, tc.want)
			}
			for i := range tc.want {
				if got.IDs[i] != tc.want[i] {
					t.Fatalf("ids %v, want %v", got.IDs, tc.want)
				}
			}
		})
	}
}

func TestDebugTokenizeAddSpecialSPM(t *testing.T) {
	model := fixtures.Path(t, "models", "stories260K.gguf")
	out, err := runDebugCmd(t, "Once", "tokenize", model, "--add-special", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, `{"ids":[1,`) {
		t.Errorf("want BOS first, got %s", out)
	}
}

func TestDebugDetokenize(t *testing.T) {
	vocab := fixtures.Path(t, "tokenizer", "vocab-qwen3.gguf")
	out, err := runDebugCmd(t, "", "detokenize", vocab, "--ids", "9707, 1879,151645")
	if err != nil || out != "Hello world" {
		t.Errorf("got %q, %v", out, err)
	}
	out, err = runDebugCmd(t, "", "detokenize", vocab, "--ids", "9707,151645", "--special")
	if err != nil || out != "Hello<|im_end|>" {
		t.Errorf("--special: got %q, %v", out, err)
	}
	for _, bad := range []string{"", "1,x", "-1", "999999"} {
		if _, err := runDebugCmd(t, "", "detokenize", vocab, "--ids", bad); err == nil {
			t.Errorf("--ids %q: no error", bad)
		}
	}
	if _, err := runDebugCmd(t, "", "detokenize", "/nonexistent.gguf", "--ids", "1"); err == nil {
		t.Error("missing model: no error")
	}
}

// TestDebugTokenizeText: without --json each token is one "id<TAB>piece"
// line, the piece being the text the token stands for (not the vocabulary
// entry: "Ġworld" is " world", SentencePiece's "▁Hello" is " Hello").
func TestDebugTokenizeText(t *testing.T) {
	tests := []struct {
		name  string
		model []string
		args  []string
		in    string
		want  string
	}{
		{"byte-level", []string{"tokenizer", "vocab-qwen3.gguf"}, nil, "Hello world", "9707\t\"Hello\"\n1879\t\" world\"\n"},
		{"special shown", []string{"tokenizer", "vocab-qwen3.gguf"}, []string{"--parse-special"}, "<|im_end|>", "151645\t\"<|im_end|>\"\n"},
		{"sentencepiece", []string{"tokenizer", "ggml-vocab-llama-spm.gguf"}, []string{"--add-special"}, "Hello", "1\t\"<s>\"\n15043\t\" Hello\"\n"},
		// ▁ then three <0xNN> byte tokens, each a third of 東
		{"partial character", []string{"models", "stories260K.gguf"}, nil, "東", "410\t\" \"\n233\t\"\\xe6\"\n160\t\"\\x9d\"\n180\t\"\\xb1\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runDebugCmd(t, tc.in, append([]string{"tokenize", fixtures.Path(t, tc.model...)}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
		})
	}
}

// A tiny Hugging Face tokenizer.json (SentencePiece-style BPE) for the
// tokenizer.json path of debug tokenize / detokenize.
const tinyTokenizerJSON = `{
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "decoder": {"type": "Sequence", "decoders": [{"type": "Replace"}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip"}]},
  "model": {"type": "BPE", "byte_fallback": true, "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 3, "h": 4, "i": 5, "▁h": 6, "▁hi": 7},
    "merges": ["▁ h", "▁h i"]}
}`

func TestDebugTokenizeHFFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tinyTokenizerJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{dir, filepath.Join(dir, "tokenizer.json")} {
		out, err := runDebugCmd(t, "hi hi", "tokenize", model, "--add-special", "--json")
		if err != nil || out != "{\"ids\":[1,7,7]}\n" {
			t.Errorf("tokenize %s: got %q, %v", model, out, err)
		}
		out, err = runDebugCmd(t, "", "detokenize", model, "--ids", "1,7,7")
		if err != nil || out != "hi hi" {
			t.Errorf("detokenize %s: got %q, %v", model, out, err)
		}
	}
	empty := t.TempDir()
	_, err := runDebugCmd(t, "x", "tokenize", empty)
	if err == nil || !strings.Contains(err.Error(), "no tokenizer.json") {
		t.Errorf("directory without tokenizer.json: %v", err)
	}
	bad := filepath.Join(empty, "tokenizer.json")
	if err := os.WriteFile(bad, []byte(`{"model": {"type": "Unigram"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runDebugCmd(t, "x", "tokenize", bad); err == nil || !strings.Contains(err.Error(), "Unigram") {
		t.Errorf("unsupported tokenizer.json: %v", err)
	}
}
