package tokenizer

import (
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// BenchmarkLoadQwen3 measures opening vocab-qwen3.gguf (the GGUF reader's
// metadata parse) and building the tokenizer (151936 tokens, 151387 merges).
func BenchmarkLoadQwen3(b *testing.B) {
	path := fixtures.Path(b, "tokenizer", "vocab-qwen3.gguf")
	cpu := startCPUTimer(b)
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
	cpu.report(b)
}

// BenchmarkFromGGUFQwen3 measures only FromGGUF (the file already open).
// Besides wall time it reports cpu-ms/op, the process CPU time per build
// (GC included), which is steadier than wall time on a loaded machine.
func BenchmarkFromGGUFQwen3(b *testing.B) {
	f, err := gguf.Open(fixtures.Path(b, "tokenizer", "vocab-qwen3.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cpu := startCPUTimer(b)
	for b.Loop() {
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}
