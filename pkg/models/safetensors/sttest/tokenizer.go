package sttest

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/helexa/helexa/pkg/models/gguf"
)

// GGUF token types.
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeByte        = 6
)

// writeTokenizer writes tokenizer.json and tokenizer_config.json from the
// GGUF vocabulary: byte-level BPE as is, a SentencePiece vocabulary as the
// BPE-with-byte-fallback form Hugging Face's converter makes of it (merges
// ranked by the merged piece's score).
func writeTokenizer(f *gguf.File, dir string) error {
	model, _ := f.String("tokenizer.ggml.model")
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return err
	}
	types, err := f.Int32s("tokenizer.ggml.token_type")
	if err != nil || len(types) != len(tokens) {
		return fmt.Errorf("sttest: token types missing or of the wrong length: %v", err)
	}
	vocab := map[string]int{}
	var added []map[string]any
	for i, w := range tokens {
		switch types[i] {
		case typeControl, typeUserDefined, typeUnknown:
			added = append(added, map[string]any{"id": i, "content": w, "special": types[i] != typeUserDefined})
		}
		vocab[w] = i
	}
	doc := map[string]any{"added_tokens": added}
	cfg := map[string]any{"add_bos_token": f.BoolOr("tokenizer.ggml.add_bos_token", model == "llama")}
	for key, name := range map[string]string{"bos_token": "bos_token_id", "eos_token": "eos_token_id", "unk_token": "unknown_token_id"} {
		if id, err := f.Uint("tokenizer.ggml." + name); err == nil && id < uint64(len(tokens)) {
			cfg[key] = tokens[id]
		}
	}
	switch model {
	case "gpt2":
		merges, err := f.Strings("tokenizer.ggml.merges")
		if err != nil {
			return err
		}
		doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwen2Regex}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}}
		doc["decoder"] = map[string]any{"type": "ByteLevel"}
		doc["model"] = map[string]any{"type": "BPE", "vocab": vocab, "merges": merges}
	case "llama":
		scores, err := f.Float32s("tokenizer.ggml.scores")
		if err != nil {
			return err
		}
		norm := []any{map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}
		if f.BoolOr("tokenizer.ggml.add_space_prefix", true) {
			norm = append([]any{map[string]any{"type": "Prepend", "prepend": "▁"}}, norm...)
		}
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": norm}
		doc["pre_tokenizer"] = nil
		doc["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
		}}
		doc["model"] = map[string]any{"type": "BPE", "byte_fallback": true, "vocab": vocab,
			"merges": spmMerges(tokens, types, scores)}
	default:
		return fmt.Errorf("sttest: cannot convert tokenizer model %q", model)
	}
	if err := writeJSON(filepath.Join(dir, "tokenizer.json"), doc); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "tokenizer_config.json"), cfg)
}

// qwen2Regex is the Qwen2/3 pre-tokenizer split.
const qwen2Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// spmMerges derives BPE merges from a SentencePiece vocabulary as Hugging
// Face's SentencePieceExtractor does: every split of a normal piece into
// two normal pieces, ranked by the piece's score (highest first), ties by
// the halves' ids.
func spmMerges(tokens []string, types []int32, scores []float32) [][2]string {
	ids := map[string]int{}
	for i, w := range tokens {
		if types[i] == typeNormal {
			ids[w] = i
		}
	}
	type merge struct {
		l, r  string
		score float32
		li    int
		ri    int
	}
	var ms []merge
	for i, w := range tokens {
		if types[i] != typeNormal {
			continue
		}
		for j := 1; j < len(w); j++ {
			l, r := w[:j], w[j:]
			li, okl := ids[l]
			ri, okr := ids[r]
			if okl && okr {
				ms = append(ms, merge{l, r, scores[i], li, ri})
			}
		}
	}
	sort.SliceStable(ms, func(a, b int) bool {
		if ms[a].score != ms[b].score {
			return ms[a].score > ms[b].score
		}
		if ms[a].li != ms[b].li {
			return ms[a].li < ms[b].li
		}
		return ms[a].ri < ms[b].ri
	})
	out := make([][2]string, len(ms))
	for i, m := range ms {
		out[i] = [2]string{m.l, m.r}
	}
	return out
}
