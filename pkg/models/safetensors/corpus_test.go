package safetensors

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzParse")

// TestUpdateCorpus (with -update-corpus) rewrites the checked-in seed
// corpus: a valid file, near-misses of it, and hand-written headers.
func TestUpdateCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite the seed corpus")
	}
	valid := image(t, smallWriter(t))
	seeds := map[string][]byte{
		"valid":         valid,
		"truncated":     valid[:len(valid)-3],
		"header-only":   valid[:20],
		"zero-tensor":   withHeader(`{"z": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, "__metadata__": {"k": "v"}}`, 0),
		"scalar":        withHeader(`{"s": {"dtype": "BF16", "shape": [], "data_offsets": [0, 2]}}`, 2),
		"overlap":       withHeader(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, 8),
		"gap":           withHeader(`{"a": {"dtype": "U8", "shape": [2], "data_offsets": [4, 6]}}`, 8),
		"sub-byte":      withHeader(`{"f": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}}`, 2),
		"padded-header": withHeader(`{"a": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}}    `, 2),
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
