package tokenizer

import (
	"fmt"

	"github.com/helexa/helexa/pkg/models/gguf"
)

// GGUF metadata keys of the vocabulary.
const (
	keyModel  = "tokenizer.ggml.model"
	keyPre    = "tokenizer.ggml.pre"
	keyTokens = "tokenizer.ggml.tokens"
	keyScores = "tokenizer.ggml.scores"
	keyTypes  = "tokenizer.ggml.token_type"
	keyMerges = "tokenizer.ggml.merges"
)

// ggufSpecialKeys maps roles to their tokenizer.ggml.*_token_id keys.
var ggufSpecialKeys = map[string][]string{
	"bos": {"bos_token_id"}, "eos": {"eos_token_id"}, "eot": {"eot_token_id"}, "eom": {"eom_token_id"},
	"unknown": {"unknown_token_id"}, "seperator": {"seperator_token_id"}, "padding": {"padding_token_id"},
	"mask":    {"mask_token_id"},
	"fim_pre": {"fim_pre_token_id", "prefix_token_id"}, "fim_suf": {"fim_suf_token_id", "suffix_token_id"},
	"fim_mid": {"fim_mid_token_id", "middle_token_id"}, "fim_pad": {"fim_pad_token_id"},
	"fim_rep": {"fim_rep_token_id"}, "fim_sep": {"fim_sep_token_id"},
}

// FromGGUF builds the tokenizer described by a GGUF file's tokenizer.ggml.*
// metadata (a full model or a vocab-only file).
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.String(keyModel)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidVocab, err)
	}
	s := &spec{pre: f.StringOr(keyPre, ""), special: map[string]int64{}, name: f.StringOr("general.name", "")}
	switch model {
	case "llama":
		s.kind = KindSPM
	case "gpt2":
		s.kind = KindBPE
	default:
		return nil, fmt.Errorf("%w: tokenizer model %q (supported: llama, gpt2)", ErrUnsupported, model)
	}
	if s.tokens, err = f.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidVocab, err)
	}
	if f.Has(keyScores) {
		if s.scores, err = f.Float32s(keyScores); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidVocab, err)
		}
	}
	if f.Has(keyTypes) {
		if s.types, err = f.Int32s(keyTypes); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidVocab, err)
		}
	}
	if s.kind == KindBPE {
		if s.mergeLines, err = f.Strings(keyMerges); err != nil {
			return nil, fmt.Errorf("%w: byte-level BPE needs merges: %w", ErrInvalidVocab, err)
		}
	}
	for role, keys := range ggufSpecialKeys {
		for _, k := range keys {
			if v, err := f.Int("tokenizer.ggml." + k); err == nil {
				s.special[role] = v
				break
			}
		}
	}
	s.addBOS = optBool(f, "tokenizer.ggml.add_bos_token")
	s.addEOS = optBool(f, "tokenizer.ggml.add_eos_token")
	s.addSpacePrefix = optBool(f, "tokenizer.ggml.add_space_prefix")
	t, err := build(s)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func optBool(f *gguf.File, key string) *bool {
	if v, err := f.Bool(key); err == nil {
		return &v
	}
	return nil
}
