package tokenizer

import (
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// BenchmarkLoadQwen3 measures opening vocab-qwen3.gguf and building the
// tokenizer (151936 tokens, 151387 merges).
func BenchmarkLoadQwen3(b *testing.B) {
	path := fixtures.Path(b, "tokenizer", "vocab-qwen3.gguf")
	for b.Loop() {
		f, err := gguf.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkBuildQwen3 measures only FromGGUF (the file already open).
func BenchmarkBuildQwen3(b *testing.B) {
	f, err := gguf.Open(fixtures.Path(b, "tokenizer", "vocab-qwen3.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
}
