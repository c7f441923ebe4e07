package tokenizer

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEncodeQwen: encoding never fails or panics on arbitrary bytes, and
// decode(encode(s)) == s for valid UTF-8 (with and without special parsing).
func FuzzEncodeQwen(f *testing.F) {
	for _, s := range []string{"Hello world", "<|im_end|>x<think>", " \t\n\r\u00a0\u2028", "東京!🚀", "\xff\xfe", "'s 'LL 123456"} {
		f.Add(s)
	}
	tk := loadGGUF(f, "tokenizer", "vocab-qwen3.gguf")
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tk.Encode(s, true, false)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		sp, err := tk.Encode(s, false, true)
		if err != nil {
			t.Fatalf("Encode(%q, parse): %v", s, err)
		}
		if !utf8.ValidString(s) {
			return
		}
		if got := tk.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		if got := tk.DecodeWith(sp, DecodeOptions{Special: true}); got != s {
			t.Fatalf("DecodeWith(Encode(%q, parse), special) = %q", s, got)
		}
	})
}

// FuzzEncodeSPM: the same for the Llama 2 SentencePiece vocabulary, whose
// normalisation turns "▁" into a space.
func FuzzEncodeSPM(f *testing.F) {
	for _, s := range []string{"Hello world", " leading", "▁x", "東京!🚀", "\xff", "<s>a</s>"} {
		f.Add(s)
	}
	tk := loadGGUF(f, "tokenizer", "ggml-vocab-llama-spm.gguf")
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tk.Encode(s, true, false)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		if _, err := tk.Encode(s, false, true); err != nil {
			t.Fatalf("Encode(%q, parse): %v", s, err)
		}
		if !utf8.ValidString(s) {
			return
		}
		if got, want := tk.Decode(ids), strings.ReplaceAll(s, "▁", " "); got != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	})
}

// FuzzDecode: decoding arbitrary ids (in and out of range) never panics and
// streaming gives the same text as a full decode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x4b, 0x25, 0, 0, 0xdd, 0x50, 0x02, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0})
	tk := loadGGUF(f, "tokenizer", "vocab-qwen3.gguf")
	f.Fuzz(func(t *testing.T, data []byte) {
		var ids []int32
		for len(data) >= 4 {
			v := int32(binary.LittleEndian.Uint32(data))
			if v >= 0 {
				v %= int32(tk.VocabSize() + 16)
			}
			ids = append(ids, v)
			data = data[4:]
		}
		for _, o := range []DecodeOptions{{}, {Special: true, Continuation: true}} {
			full := tk.DecodeWith(ids, o)
			d := tk.NewDecoderWith(o)
			var sb strings.Builder
			for _, id := range ids {
				sb.WriteString(d.Add(id))
			}
			sb.WriteString(d.Flush())
			if sb.String() != full {
				t.Fatalf("stream %q != decode %q", sb.String(), full)
			}
		}
	})
}

// allBytesAreTokens reports whether a byte-level vocabulary has a token for
// every byte of s. Some have none for a few bytes (Falcon: several control
// characters; StarCoder: 0xF1); like llama.cpp, encoding drops those bytes.
func allBytesAreTokens(tk *Tokenizer, s string) bool {
	if tk.Kind() != KindBPE {
		return true
	}
	for i := 0; i < len(s); i++ {
		if _, ok := tk.TokenID(string(tk.bl.enc[s[i]])); !ok {
			return false
		}
	}
	return true
}

// FuzzEncodeFamilies: every vocabulary of the fixture pairs (each
// pre-tokenizer family, SentencePiece and byte-level) encodes arbitrary
// text without error or panic, and decodes valid UTF-8 back to it (when
// the vocabulary can represent every byte of it).
func FuzzEncodeFamilies(f *testing.F) {
	for _, s := range []string{"Hello world", "  x\t\n\n y", "東京!🚀 naïve", "3.14159 1000000", "<|endoftext|> <s>", "\xc3", "'ll 'S"} {
		f.Add(s)
	}
	var vocabs []*Tokenizer
	for _, p := range loadPairs(f) {
		vocabs = append(vocabs, loadGGUF(f, "tokenizer", p.Vocab))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tk := range vocabs {
			ids, err := tk.Encode(s, false, false)
			if err != nil {
				t.Fatalf("%s/%s: Encode(%q): %v", tk.Kind(), tk.Pre(), s, err)
			}
			if !utf8.ValidString(s) || !allBytesAreTokens(tk, s) {
				continue
			}
			want := s
			if tk.Kind() == KindSPM {
				want = strings.ReplaceAll(s, "▁", " ")
			}
			if got := tk.Decode(ids); got != want {
				t.Fatalf("%s/%s: Decode(Encode(%q)) = %q", tk.Kind(), tk.Pre(), s, got)
			}
		}
	})
}
