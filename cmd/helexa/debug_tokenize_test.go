package main

import (
	"bytes"
	"context"
	"encoding/json"
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
		{"added as text", nil, "<think>", []int32{13708, 766, 29}},
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
