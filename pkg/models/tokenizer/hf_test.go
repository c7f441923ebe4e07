package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// hfFromGGUF writes a tokenizer.json / tokenizer_config.json pair into dir
// from a byte-level GGUF vocabulary, the way a Hugging Face repo ships it.
func hfFromGGUF(t *testing.T, vocab, regex string, cfg map[string]any) (tokJSON, cfgJSON []byte) {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "tokenizer", vocab))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tokens, _ := f.Strings(keyTokens)
	types, _ := f.Int32s(keyTypes)
	merges, _ := f.Strings(keyMerges)
	vocabMap := map[string]int{}
	var added []map[string]any
	for i, w := range tokens {
		switch types[i] {
		case typeNormal:
			vocabMap[w] = i
		case typeControl, typeUserDefined:
			added = append(added, map[string]any{"id": i, "content": w, "special": types[i] == typeControl})
		}
	}
	doc := map[string]any{
		"added_tokens": added,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": regex}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocabMap, "merges": merges, "ignore_merges": strings.Contains(vocab, "llama3")},
	}
	if strings.Contains(vocab, "llama3") {
		doc["post_processor"] = map[string]any{"type": "TemplateProcessing", "single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<|begin_of_text|>", "type_id": 0}},
			map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
		}}
	}
	dir := t.TempDir()
	for name, v := range map[string]any{"tokenizer.json": doc, "tokenizer_config.json": cfg} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tokJSON, _ = os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	cfgJSON, _ = os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	return tokJSON, cfgJSON
}

func TestFromHFMatchesGGUF(t *testing.T) {
	tests := []struct {
		vocab, inp, regex string
		cfg               map[string]any
	}{
		{"vocab-qwen3.gguf", "ggml-vocab-qwen2.gguf.inp",
			`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
			map[string]any{"bos_token": nil, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "add_bos_token": false}},
		{"vocab-llama3.gguf", "ggml-vocab-llama-bpe.gguf.inp",
			`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
			map[string]any{"bos_token": "<|begin_of_text|>", "eos_token": map[string]any{"content": "<|eot_id|>"}}},
	}
	for _, tc := range tests {
		t.Run(tc.vocab, func(t *testing.T) {
			tokJSON, cfgJSON := hfFromGGUF(t, tc.vocab, tc.regex, tc.cfg)
			hf, err := FromHF(tokJSON, cfgJSON)
			if err != nil {
				t.Fatal(err)
			}
			ref := loadGGUF(t, "tokenizer", tc.vocab)
			// (the GGUF pads Qwen's vocabulary to config.json's 151936 and takes
			// BOS from config.json; tokenizer.json has neither)
			if hf.VocabSize() > ref.VocabSize() || hf.EOS() != ref.EOS() ||
				hf.AddBOS() != ref.AddBOS() || !slices.Equal(hf.EOGs(), ref.EOGs()) {
				t.Errorf("specials differ: hf vocab %d bos %d eos %d addbos %v eog %v; gguf %d %d %d %v %v",
					hf.VocabSize(), hf.BOS(), hf.EOS(), hf.AddBOS(), hf.EOGs(),
					ref.VocabSize(), ref.BOS(), ref.EOS(), ref.AddBOS(), ref.EOGs())
			}
			for i, c := range loadVectors(t, vectorPair{Inp: tc.inp, Out: strings.TrimSuffix(tc.inp, ".inp") + ".out"}) {
				got, err := hf.Encode(c.text, false, false)
				if err != nil || !equalIDs(got, c.ids) {
					t.Errorf("case %d %q: got %v (%v), want %v", i, c.text, got, err, c.ids)
				}
				if dec := hf.Decode(got); dec != c.text {
					t.Errorf("case %d: decode %q", i, dec)
				}
			}
		})
	}
}

// A hand-written SentencePiece-style tokenizer.json (Llama 2 layout): ▁ for
// spaces, a prepended ▁, merges by rank, <0xNN> byte fallback.
const spmStyleJSON = `{
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true},
    {"id": 1, "content": "<s>", "special": true},
    {"id": 2, "content": "</s>", "special": true}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
  ]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]},
  "decoder": {"type": "Sequence", "decoders": [{"type": "Replace"}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip"}]},
  "model": {"type": "BPE", "byte_fallback": true, "vocab": {
    "<unk>": 0, "<s>": 1, "</s>": 2, "<0xC3>": 3, "<0xA9>": 4,
    "▁": 5, "h": 6, "e": 7, "l": 8, "o": 9, "▁h": 10, "ll": 11, "▁he": 12, "llo": 13, "▁hello": 14
  }, "merges": ["▁ h", "l l", "▁h e", "ll o", "▁he llo"]}
}`

func TestFromHFSentencePieceStyle(t *testing.T) {
	tk, err := FromHF([]byte(spmStyleJSON), []byte(`{"bos_token": "<s>", "eos_token": "</s>"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Kind() != KindBPERaw || !tk.AddBOS() || tk.BOS() != 1 || tk.EOS() != 2 {
		t.Fatalf("kind %v addbos %v bos %d eos %d", tk.Kind(), tk.AddBOS(), tk.BOS(), tk.EOS())
	}
	tests := []struct {
		text string
		want []int32
	}{
		{"hello", []int32{1, 14}},
		{"hello hell", []int32{1, 14, 12, 11}},
		{"hé", []int32{1, 10, 3, 4}}, // é is not a token: byte fallback
	}
	for _, tc := range tests {
		got, err := tk.Encode(tc.text, true, false)
		if err != nil || !equalIDs(got, tc.want) {
			t.Errorf("Encode(%q) = %v (%v), want %v", tc.text, got, err, tc.want)
		}
		if dec := tk.Decode(got); dec != tc.text {
			t.Errorf("Decode = %q, want %q", dec, tc.text)
		}
	}
}

func TestFromHFErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":      `{`,
		"unigram":       `{"model": {"type": "Unigram", "vocab": [["a", 0]]}}`,
		"no pretok":     `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`,
		"bad merges":    `{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": 5}}`,
		"negative id":   `{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}`,
		"no tokens":     `{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`,
		"sparse ids":    `{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {"a": 0, "b": 16000000}, "merges": []}}`,
		"bad bos count": `{"decoder": {"type": "ByteLevel"}, "pre_tokenizer": {"type": "ByteLevel", "use_regex": true}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`,
	} {
		cfg := []byte(`{"add_bos_token": true}`)
		if name != "bad bos count" {
			cfg = nil
		}
		_, err := FromHF([]byte(doc), cfg)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, ErrInvalidVocab) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error %v is not typed", name, err)
		}
	}
}

// TestFromHFNormalizerNFC: Qwen's tokenizer.json normalises text to NFC
// before splitting, so a decomposed "é" (e + U+0301) tokenizes like "é".
func TestFromHFNormalizerNFC(t *testing.T) {
	tokJSON, cfgJSON := hfFromGGUF(t, "vocab-qwen3.gguf", qwen2Regex,
		map[string]any{"bos_token": nil, "eos_token": "<|im_end|>", "add_bos_token": false})
	var doc map[string]any
	if err := json.Unmarshal(tokJSON, &doc); err != nil {
		t.Fatal(err)
	}
	plain := loadGGUF(t, "tokenizer", "vocab-qwen3.gguf") // no normalizer
	doc["normalizer"] = map[string]any{"type": "NFC"}
	tokJSON, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	nfc, err := FromHF(tokJSON, cfgJSON)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, text, same string }{
		{"decomposed", "cafe\u0301 au lait", "café au lait"},
		{"composed unchanged", "café au lait", "café au lait"},
		{"ascii", "Hello world", "Hello world"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nfc.Encode(tc.text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := plain.Encode(tc.same, false, false)
			if !equalIDs(got, want) {
				t.Errorf("NFC Encode(%q) = %v, want %v (the ids of %q)", tc.text, got, want, tc.same)
			}
			if dec := nfc.Decode(got); dec != tc.same {
				t.Errorf("decode = %q, want %q", dec, tc.same)
			}
		})
	}
	// without the normalizer the decomposed form keeps its combining mark
	got, _ := plain.Encode("cafe\u0301", false, false)
	if dec := plain.Decode(got); dec != "cafe\u0301" {
		t.Errorf("plain decode = %q", dec)
	}
}
