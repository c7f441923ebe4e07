package tokenizer

import (
	"os"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
)

// benchText is ~1 MB of mixed text: the fixture inputs and reference
// prompts repeated.
func benchText(b *testing.B) string {
	var sb strings.Builder
	for _, p := range loadPairs(b) {
		raw, err := os.ReadFile(fixtures.Path(b, "tokenizer", p.Inp))
		if err != nil {
			b.Fatal(err)
		}
		sb.WriteString(strings.ReplaceAll(string(raw), "\n__ggml_vocab_test__\n", "\n"))
	}
	for _, c := range loadReference(b, "qwen3-tiny-Q8_0.json") {
		sb.WriteString(c.Prompt)
		sb.WriteString("\n")
	}
	unit := sb.String()
	return strings.Repeat(unit, 1<<20/len(unit)+1)
}

// BenchmarkEncodeQwen3 reports encode throughput on one core (b.SetBytes).
func BenchmarkEncodeQwen3(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "vocab-qwen3.gguf")
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := tk.Encode(text, false, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeQwen3Cold is the same with the word cache cleared each
// time (worst case: every word merged from bytes).
func BenchmarkEncodeQwen3Cold(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "vocab-qwen3.gguf")
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tk.cache.mu.Lock()
		clear(tk.cache.m)
		tk.cache.mu.Unlock()
		if _, err := tk.Encode(text, false, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeLlama3 reports encode throughput for the Llama 3 vocab.
func BenchmarkEncodeLlama3(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "vocab-llama3.gguf")
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := tk.Encode(text, false, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeQwen3 reports decode throughput.
func BenchmarkDecodeQwen3(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "vocab-qwen3.gguf")
	ids, err := tk.Encode(benchText(b), false, false)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		_ = tk.Decode(ids)
	}
}

// BenchmarkEncodeSPM reports encode throughput for the Llama 2
// SentencePiece vocab (no word cache: every token lookup is by text).
func BenchmarkEncodeSPM(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "ggml-vocab-llama-spm.gguf")
	text := benchText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := tk.Encode(text, false, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeQwen3 reports byte-level BPE throughput without the word
// cache: every pre-tokenized word of the benchmark text is merged from its
// bytes (the merge-table lookups dominate).
func BenchmarkMergeQwen3(b *testing.B) {
	tk := loadGGUF(b, "tokenizer", "vocab-qwen3.gguf")
	text := benchText(b)
	text = text[:strings.LastIndexByte(text[:1<<18], '\n')+1]
	sc := tk.getScratch()
	lens, err := tk.split.split(text, &sc.split, classes(cptTable()))
	if err != nil {
		b.Fatal(err)
	}
	lens = append([]int(nil), lens...)
	out := make([]int32, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		out, pos := out[:0], 0
		for _, n := range lens {
			out = tk.encodeWordUncached(sc, text[pos:pos+n], out)
			pos += n
		}
	}
}
