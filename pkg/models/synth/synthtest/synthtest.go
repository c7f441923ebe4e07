// Package synthtest writes the synth package's random-weight models for
// tests, with the vocabulary each shape names from the fixtures.
package synthtest

import (
	"path/filepath"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
	"github.com/helexa/helexa/pkg/models/synth"
)

// Write writes the synth shape in quant (f32, f16, q8_0, q4_k_m) with seed
// to a file of t's temporary directory and returns its path; any failure
// (a missing fixture included) fails t.
func Write(t testing.TB, shape, quant string, seed uint64) string {
	t.Helper()
	sh, err := synth.ShapeNamed(shape)
	if err != nil {
		t.Fatal(err)
	}
	v, err := gguf.Open(fixtures.Path(t, sh.VocabFile))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	path := filepath.Join(t.TempDir(), shape+"-"+quant+".gguf")
	if err := synth.Write(path, synth.Options{Shape: sh, Quant: quant, Vocab: v, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return path
}
