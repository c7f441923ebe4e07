package gguf

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzParse from the writer")

// FuzzParse feeds arbitrary bytes to the parser: it must return a File or an
// error, never panic, and every tensor it accepts must lie inside the input.
// The seed corpus in testdata/fuzz/FuzzParse runs with plain `go test`.
func FuzzParse(f *testing.F) {
	f.Add(encode(f, smallModel(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := fromBytes("fuzz.gguf", data)
		if err != nil {
			return
		}
		for _, ti := range file.Tensors() {
			b := file.TensorData(ti)
			if int64(len(b)) != ti.Size {
				t.Fatalf("tensor %q: %d bytes of data, want %d", ti.Name, len(b), ti.Size)
			}
			if ti.Type.BlockSize() == 0 {
				t.Fatalf("tensor %q: unknown type %d accepted", ti.Name, ti.Type)
			}
		}
		for _, k := range file.Keys() {
			if _, ok := file.Value(k); !ok {
				t.Fatalf("key %q listed but has no value", k)
			}
		}
	})
}

// corpusSeeds are the checked-in seed inputs: valid files and corrupted ones.
func corpusSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{"valid-small": encode(t, smallModel(t))}
	w := NewWriter()
	seeds["valid-empty"] = encode(t, w)
	w = NewWriter()
	_ = w.SetValue("nested", Value{Type: TypeArray, Elem: TypeArray, V: []any{
		Value{Type: TypeArray, Elem: TypeInt8, V: []any{int8(-1)}},
	}})
	_ = w.SetValue("f64", Value{Type: TypeFloat64, V: 1.0})
	w.SetBool("b", true)
	_ = w.AddTensor("k", dtype.Q4_K, []uint64{256}, make([]byte, dtype.Q4_K.TypeSize()))
	_ = w.AddTensor("s", dtype.F16, []uint64{3, 1, 1, 1}, make([]byte, 6))
	seeds["valid-nested-kquant"] = encode(t, w)
	for i, c := range corruptions(t) {
		seeds[fmt.Sprintf("corrupt-%02d", i)] = c.edit(encode(t, smallModel(t)))
	}
	return seeds
}

// TestSeedCorpusUpToDate regenerates the corpus with -update-corpus and
// otherwise checks that the checked-in corpus exists.
func TestSeedCorpusUpToDate(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	seeds := corpusSeeds(t)
	if *updateCorpus {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, data := range seeds {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("seed %s missing (run go test ./pkg/models/gguf -run TestSeedCorpus -update-corpus): %v", name, err)
		}
		if !bytes.Contains(got, []byte(fmt.Sprintf("%q", data))) {
			t.Errorf("seed %s is stale (run go test ./pkg/models/gguf -run TestSeedCorpus -update-corpus)", name)
		}
	}
}
