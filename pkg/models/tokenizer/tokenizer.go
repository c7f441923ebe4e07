// Package tokenizer owns text <-> token conversion for every model helexa
// runs: SentencePiece-style BPE (GGUF tokenizer.ggml.model "llama"), GPT-2
// style byte-level BPE with each family's pre-tokenizer ("gpt2"), and
// Hugging Face tokenizer.json BPE models. Behaviour follows llama.cpp's
// llama-vocab.cpp token for token (EOG sets, byte fallback, leading-space
// rules) with one deliberate difference, below. It also provides an
// incremental decoder for streaming that never splits a UTF-8 character.
//
// Special and added tokens: every control, user-defined and unknown token
// (GGUF token types CONTROL / USER_DEFINED / UNKNOWN; tokenizer.json
// added_tokens, special or not) is recognised in text only when the caller
// passes parseSpecial to Encode: "<|im_end|>", "<think>" or "<tool_call>"
// then become their single ids (longest match first, with the tokens'
// lstrip / rstrip rules). Without parseSpecial no such token is ever
// produced: the text is tokenized as ordinary text, so "<think>" gives
// "<th" "ink" ">". llama.cpp and Hugging Face match user-defined tokens in
// plain text too; helexa does not, so that text from users or tools can never
// inject markup tokens. Prompts rendered from a chat template are encoded
// with parseSpecial. The exception is a user-defined token made only of
// whitespace (MPT's runs of spaces): it carries no markup, so it is matched in
// plain text as llama.cpp does, and plain-text ids equal llama.cpp's on every
// vocabulary in the fixtures.
package tokenizer

import (
	"errors"
	"sync"
)

// Errors callers can branch on.
var (
	// ErrUnsupported: the vocabulary uses a tokenizer model or pre-tokenizer
	// this package does not implement.
	ErrUnsupported = errors.New("tokenizer: unsupported")
	// ErrInvalidVocab: the vocabulary metadata is missing or inconsistent.
	ErrInvalidVocab = errors.New("tokenizer: invalid vocabulary")
	// ErrUnknownToken: text cannot be represented (an SPM vocabulary without
	// a byte-fallback token for some byte).
	ErrUnknownToken = errors.New("tokenizer: text not representable")
)

// NoToken is returned by accessors when the vocabulary has no such token.
const NoToken int32 = -1

// Token attributes (llama.cpp's llama_token_attr).
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrLstrip
	attrRstrip
)

// Kind is the tokenizer algorithm.
type Kind int

const (
	// KindSPM is llama.cpp's SentencePiece BPE (scores, ▁ spaces, <0xNN>).
	KindSPM Kind = iota
	// KindBPE is GPT-2 style byte-level BPE with a regex pre-tokenizer.
	KindBPE
	// KindBPERaw is Hugging Face BPE on raw UTF-8 with ▁ for spaces and
	// <0xNN> byte fallback (tokenizer.json models of Llama-2 style).
	KindBPERaw
)

func (k Kind) String() string {
	switch k {
	case KindSPM:
		return "spm"
	case KindBPE:
		return "bpe"
	case KindBPERaw:
		return "bpe-raw"
	}
	return "unknown"
}

// Tokenizer converts text to token ids and back. It is safe for concurrent
// use.
type Tokenizer struct {
	kind  Kind
	pre   string
	split *pretokenizer // KindBPE

	text   vocabText // token texts
	scores []float32
	attrs  []attr
	toID   *tokenIndex

	// BPE merges over symbol ids: vocabulary ids, then extra strings.
	merges       mergeTable
	extra        []string
	extraID      map[string]int32
	byteSym      [256]int32 // KindBPE: symbol of each raw byte
	byteTok      [256]int32 // SPM / raw BPE: <0xNN> (or the byte itself) token, NoToken if none
	bl           *byteLevel
	ignoreMerges bool
	nfc          bool

	addSpacePrefix bool
	addBOS, addEOS bool
	bos, eos, eot  int32
	eom, unk, pad  int32
	eog            []int32 // sorted
	eogSet         map[int32]struct{}
	specials       []int32 // control / user-defined / unknown, longest first
	userDefined    []int32 // the user-defined ones (not control), longest first

	piecesOnce sync.Once
	pieces     []byte   // decoded text of every token, back to back (lazy: pieceTable)
	pieceOff   []uint32 // len(tokens)+1 offsets into pieces

	cache   *wordCache
	scratch sync.Pool
}

type merge struct {
	rank   int32
	result int32
}

// Kind reports the algorithm.
func (t *Tokenizer) Kind() Kind { return t.kind }

// Pre reports the pre-tokenizer family name (tokenizer.ggml.pre).
func (t *Tokenizer) Pre() string { return t.pre }

// VocabSize is the number of token ids.
func (t *Tokenizer) VocabSize() int { return t.text.len() }

// BOS is the beginning-of-sequence token, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn token (e.g. <|im_end|>, <|eot_id|>), or NoToken.
func (t *Tokenizer) EOT() int32 { return t.eot }

// EOM is the end-of-message token (<|eom_id|>), or NoToken.
func (t *Tokenizer) EOM() int32 { return t.eom }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// IsEOG reports whether id ends generation.
func (t *Tokenizer) IsEOG(id int32) bool {
	_, ok := t.eogSet[id]
	return ok
}

// EOGs returns the end-of-generation ids, ascending (a copy).
func (t *Tokenizer) EOGs() []int32 { return append([]int32(nil), t.eog...) }

// TokenText returns the vocabulary string of id ("" when out of range).
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= t.text.len() {
		return ""
	}
	return t.text.at(id)
}

// TokenID returns the id whose vocabulary string is exactly text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.toID.lookup(text)
	return id, ok
}

// IsControl reports whether id is a control (special) token, never
// rendered by Decode.
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&(attrControl|attrUnknown) != 0
}

// Piece returns the text one token contributes to the output (its raw
// bytes; may be part of a UTF-8 character). Control tokens give "" unless
// special is set.
func (t *Tokenizer) Piece(id int32, special bool) string {
	return string(t.pieceBytes(id, special))
}

// pieceTable returns the decoded text of every token, built on first use.
func (t *Tokenizer) pieceTable() pieceTable {
	t.piecesOnce.Do(t.initPieces)
	return pieceTable{t: t, pieces: t.pieces, off: t.pieceOff}
}

func (t *Tokenizer) pieceBytes(id int32, special bool) []byte {
	return t.pieceTable().bytes(id, special)
}

// pieceTable is a Tokenizer's piece table, fetched once per decoder.
type pieceTable struct {
	t      *Tokenizer
	pieces []byte
	off    []uint32
}

// bytes returns the piece of id; out-of-range ids and, unless special,
// control tokens give nothing.
func (p pieceTable) bytes(id int32, special bool) []byte {
	if id < 0 || int(id) >= len(p.off)-1 {
		return nil
	}
	if !special && p.t.attrs[id]&(attrControl|attrUnknown) != 0 {
		return nil
	}
	return p.pieces[p.off[id]:p.off[id+1]:p.off[id+1]]
}
