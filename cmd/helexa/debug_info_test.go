package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/dtype"
	"github.com/helexa/helexa/pkg/models/gguf"
)

func runInfoCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	root.SetArgs(append([]string{"debug", "info"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestDebugInfoJSONFixture(t *testing.T) {
	path := fixtures.Path(t, "models", "llama-q-Q4_K_M.gguf")
	out, err := runInfoCmd(t, path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var info modelInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if info.Architecture != "llama" || info.FileType != "Q4_K_M" || info.TensorCount != 21 || info.FileSize != 1142976 || info.VocabSize != 512 {
		t.Errorf("info = %+v", info)
	}
	if info.Hyperparameters["llama.block_count"] != float64(2) || info.General["general.file_type"] != float64(15) {
		t.Errorf("metadata: %v %v", info.Hyperparameters, info.General)
	}
	for k := range info.Hyperparameters {
		if !strings.HasPrefix(k, "llama.") {
			t.Errorf("hyperparameter %s", k)
		}
	}
	want := map[string]int{"Q4_K": 13, "F32": 5, "Q6_K": 3}
	for _, q := range info.QuantTypes {
		if want[q.Type] != q.Tensors {
			t.Errorf("%s: %d tensors, want %d", q.Type, q.Tensors, want[q.Type])
		}
	}
	if len(info.QuantTypes) != len(want) || info.Parameters != 1836288 {
		t.Errorf("types %v parameters %d", info.QuantTypes, info.Parameters)
	}
}

func TestDebugInfoText(t *testing.T) {
	w := gguf.NewWriter()
	w.SetString("general.architecture", "qwen3")
	w.SetUint32("qwen3.block_count", 1)
	w.SetFloat32("qwen3.rope.freq_base", 1e6)
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b"})
	w.SetFloat32s("qwen3.long", make([]float32, 100))
	if err := w.AddTensor("x", dtype.F16, []uint64{4, 2}, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	out, err := runInfoCmd(t, path)
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"architecture qwen3", "parameters 8 (8)", "tensors 1", "F16×1", "qwen3.block_count 1", "1e+06", "[100 × f32]", "vocab size 2"} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tokenizer.ggml.tokens") {
		t.Errorf("tokenizer keys shown:\n%s", out)
	}
}

func TestFileTypeName(t *testing.T) {
	tests := []struct {
		ft   uint64
		want string
	}{
		{0, "F32"}, {1, "F16"}, {7, "Q8_0"}, {12, "Q3_K_M"}, {15, "Q4_K_M"}, {17, "Q5_K_M"},
		{18, "Q6_K"}, {30, "IQ4_XS"}, {32, "BF16"}, {38, "MXFP4_MOE"},
		{4, "unknown (4)"}, {33, "unknown (33)"}, {39, "unknown (39)"}, {1 << 40, "unknown (1099511627776)"},
	}
	for _, tt := range tests {
		if got := fileTypeName(tt.ft); got != tt.want {
			t.Errorf("fileTypeName(%d) = %q, want %q", tt.ft, got, tt.want)
		}
	}
}

func TestDebugInfoErrors(t *testing.T) {
	if _, err := runInfoCmd(t, filepath.Join(t.TempDir(), "none.gguf")); err == nil || !strings.Contains(err.Error(), "none.gguf") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := runInfoCmd(t); err == nil {
		t.Error("no argument accepted")
	}
}
