package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// streamAll feeds ids one at a time and checks every chunk is valid UTF-8
// when the full text is.
func streamAll(t *testing.T, tk *Tokenizer, ids []int32, o DecodeOptions) string {
	t.Helper()
	d := tk.NewDecoderWith(o)
	var sb strings.Builder
	for _, id := range ids {
		chunk := d.Add(id)
		if !utf8.ValidString(chunk) {
			t.Errorf("Add(%d) returned invalid UTF-8 %q", id, chunk)
		}
		sb.WriteString(chunk)
	}
	sb.WriteString(d.Flush())
	if d.Pending() != 0 {
		t.Error("Pending after Flush")
	}
	return sb.String()
}

func TestStreamDecoder(t *testing.T) {
	texts := []string{
		"Hello world",
		"東京! Δx≈0.01? 🚀 (normal) 😶‍🌫️ naïve",
		"Order #4521: 3×café @ €4.50 (2024-03-07). Straße → naïve; 東京!",
		"  leading spaces and\ttabs\n\nnew lines",
		"",
	}
	vocabs := [][]string{
		{"tokenizer", "vocab-qwen3.gguf"},
		{"tokenizer", "vocab-llama3.gguf"},
		{"tokenizer", "ggml-vocab-llama-spm.gguf"},
		{"models", "stories260K.gguf"}, // 512 tokens: non-ASCII becomes <0xNN> bytes
	}
	for _, v := range vocabs {
		tk := loadGGUF(t, v...)
		for _, text := range texts {
			ids, err := tk.Encode(text, true, false)
			if err != nil {
				t.Fatal(err)
			}
			full := tk.Decode(ids)
			if full != text {
				t.Errorf("%s: Decode(Encode(%q)) = %q", v[1], text, full)
			}
			if got := streamAll(t, tk, ids, DecodeOptions{}); got != full {
				t.Errorf("%s: stream %q != decode %q", v[1], got, full)
			}
		}
	}
}

func TestStreamHoldsPartialCharacters(t *testing.T) {
	tk := loadGGUF(t, "models", "stories260K.gguf")
	ids, err := tk.Encode("東", false, false) // ▁ then three byte tokens
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 4 {
		t.Fatalf("ids %v: want ▁ + 3 byte tokens", ids)
	}
	d := tk.NewDecoderWith(DecodeOptions{Continuation: true})
	var chunks []string
	for _, id := range ids {
		chunks = append(chunks, d.Add(id))
	}
	want := []string{" ", "", "", "東"}
	for i := range want {
		if chunks[i] != want[i] {
			t.Fatalf("chunks %q, want %q", chunks, want)
		}
	}
	// an unfinished character comes out on Flush
	d = tk.NewDecoder()
	if got := d.Add(ids[1]); got != "" {
		t.Errorf("lead byte alone: %q", got)
	}
	if got := d.Flush(); got != "\xe6" {
		t.Errorf("Flush = %q", got)
	}
	// a byte that can never start a character is not held
	cont, ok := tk.TokenID("<0x80>")
	if !ok {
		t.Fatal("no <0x80>")
	}
	if got := tk.NewDecoder().Add(cont); got != "\x80" {
		t.Errorf("stray continuation byte: %q", got)
	}
}

func TestLeadingSpaceRules(t *testing.T) {
	spm := loadGGUF(t, "tokenizer", "ggml-vocab-llama-spm.gguf")
	ids, _ := spm.Encode("Hello world", true, false) // BOS ▁Hello ▁world
	if got := spm.Decode(ids); got != "Hello world" {
		t.Errorf("Decode = %q", got)
	}
	if got := spm.DecodeWith(ids, DecodeOptions{Special: true}); got != "<s> Hello world" {
		t.Errorf("Decode special = %q", got)
	}
	gen := ids[2:] // "▁world" generated after a prompt
	if got := streamAll(t, spm, gen, DecodeOptions{Continuation: true}); got != " world" {
		t.Errorf("continuation = %q", got)
	}
	if got := spm.DecodeWith(gen, DecodeOptions{Continuation: true}); got != " world" {
		t.Errorf("DecodeWith continuation = %q", got)
	}
	// byte-level BPE has no prefix space to strip
	qwen := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	ids, _ = qwen.Encode(" world", false, false)
	if got := qwen.Decode(ids); got != " world" {
		t.Errorf("qwen Decode = %q", got)
	}
}

func TestDecodeOutOfRange(t *testing.T) {
	tk := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf")
	if got := tk.Decode([]int32{-5, 9707, 1 << 30}); got != "Hello" {
		t.Errorf("Decode = %q", got)
	}
	if got := tk.Decode([]int32{151700}); got != "" { // [PAD…] unused entry
		t.Errorf("padding entry = %q", got)
	}
}
