package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Code point classes, the subset of llama.cpp's unicode_cpt_flags that the
// pre-tokenizers consult.
const (
	cLetter uint8 = 1 << iota
	cNumber
	cSpace
	cPunct
	cSymbol
	cMark
)

// cptTable holds the class of every code point below 0x10000; the rest are
// classified on demand. It is computed once and never changes.
var cptTable = sync.OnceValue(func() []uint8 {
	t := make([]uint8, 0x10000)
	for r := range t {
		t[r] = classify(rune(r))
	}
	return t
})

func classify(r rune) uint8 {
	var f uint8
	switch {
	case unicode.IsLetter(r):
		f = cLetter
	case unicode.IsNumber(r):
		f = cNumber
	case unicode.IsPunct(r):
		f = cPunct
	case unicode.IsSymbol(r):
		f = cSymbol
	case unicode.IsMark(r):
		f = cMark
	}
	if unicode.IsSpace(r) {
		f |= cSpace
	}
	return f
}

// classes is a per-call view of the class table.
type classes []uint8

func (c classes) of(r rune) uint8 {
	if r >= 0 && int(r) < len(c) {
		return c[r]
	}
	return classify(r)
}

// toRunes decodes s into dst (reused), turning every byte of an invalid
// sequence into U+FFFD as llama.cpp's unicode_cpts_from_utf8 does.
func toRunes(dst []rune, s string) []rune {
	dst = dst[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, rune(c))
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		dst = append(dst, r) // RuneError with n == 1 for invalid bytes
		i += n
	}
	return dst
}

// byteLevel maps each byte to the printable rune GPT-2's byte-level BPE uses
// for it, and back.
type byteLevel struct {
	enc [256]rune
	// dec[r] is 1 + the byte that rune r stands for, 0 for runes outside
	// the table (the runes used are U+0021..U+0143).
	dec [byteLevelRunes]uint16
}

// byteLevelRunes bounds the runes byteLevel uses: 256 plus the 68 bytes
// that are remapped.
const byteLevelRunes = 256 + 68

func newByteLevel() *byteLevel {
	b := &byteLevel{}
	n := 0
	for c := 0; c < 256; c++ {
		if (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF) {
			b.enc[c] = rune(c)
		} else {
			b.enc[c] = rune(256 + n)
			n++
		}
		b.dec[b.enc[c]] = uint16(c) + 1
	}
	return b
}

// encode returns the byte-level form of raw bytes.
func (b *byteLevel) encode(raw string) string {
	out := make([]byte, 0, len(raw)*2)
	for i := 0; i < len(raw); i++ {
		out = utf8.AppendRune(out, b.enc[raw[i]])
	}
	return string(out)
}

// decode turns a byte-level token text back into raw bytes; runes outside
// the table are kept as their UTF-8 encoding.
func (b *byteLevel) decode(dst []byte, text string) []byte {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf { // ASCII stands for itself (or is kept as is)
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r < byteLevelRunes && b.dec[r] != 0 {
			dst = append(dst, byte(b.dec[r]-1))
		} else {
			dst = utf8.AppendRune(dst, r) // invalid bytes become U+FFFD
		}
		i += n
	}
	return dst
}
