package tokenizer

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fragment is a piece of the input: raw text, or a special token.
type fragment struct {
	text string
	tok  int32 // NoToken for text
}

// Encode converts text to token ids. addSpecial adds BOS/EOS as the
// vocabulary asks (AddBOS/AddEOS). User-defined added tokens (Qwen's
// "<think>", "<tool_call>", MPT's runs of spaces) are matched in any text,
// as llama.cpp and Hugging Face do; parseSpecial also lets control tokens
// written in the text (such as "<|im_end|>") become their ids — without it
// no control token is ever produced from text.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return t.EncodeContext(context.Background(), text, addSpecial, parseSpecial)
}

// EncodeContext is Encode, stopping with an error wrapping ctx.Err() once
// ctx is done (a request's cancellation or deadline), checked between
// fragments and every few dozen pre-tokenizer matches and words.
func (t *Tokenizer) EncodeContext(ctx context.Context, text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	out := make([]int32, 0, len(text)/3+2)
	frags := t.partition(text, parseSpecial)
	sc := t.getScratch()
	defer t.scratch.Put(sc)
	var err error
	switch t.kind {
	case KindSPM, KindBPERaw:
		out, err = t.encodeSPMFragments(ctx, sc, frags, addSpecial, out)
	default:
		if addSpecial && t.addBOS {
			out = append(out, t.bos)
		}
		for _, f := range frags {
			if f.tok != NoToken {
				out = append(out, f.tok)
				continue
			}
			if out, err = t.encodeText(ctx, sc, f.text, out); err != nil {
				return nil, err
			}
		}
		if addSpecial && t.addEOS {
			out = append(out, t.eos)
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tokenizer) encodeSPMFragments(ctx context.Context, sc *scratch, frags []fragment, addSpecial bool, out []int32) ([]int32, error) {
	prevSpecial := true
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	var b strings.Builder
	for _, f := range frags {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if f.tok != NoToken {
			out = append(out, f.tok)
			prevSpecial = true
			continue
		}
		b.Reset()
		if t.addSpacePrefix && prevSpecial {
			b.WriteString("▁")
		}
		for i := 0; i < len(f.text); i++ {
			if f.text[i] == ' ' {
				b.WriteString("▁")
			} else {
				b.WriteByte(f.text[i])
			}
		}
		var err error
		if t.kind == KindBPERaw {
			txt := b.String()
			if t.nfc {
				txt = norm.NFC.String(txt)
			}
			out = t.encodeWord(sc, txt, out)
		} else if out, err = t.encodeSPM(&sc.spm, b.String(), out); err != nil {
			return nil, err
		}
		prevSpecial = false
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out, nil
}

// encodeText tokenizes one text fragment with a BPE model.
func (t *Tokenizer) encodeText(ctx context.Context, sc *scratch, text string, out []int32) ([]int32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	text = sanitize(text)
	if t.nfc {
		text = norm.NFC.String(text)
	}
	lens, err := t.split.splitCtx(ctx, text, &sc.split, classes(cptTable()))
	if err != nil {
		return nil, err
	}
	pos := 0
	for i, n := range lens {
		if i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("tokenizer: %w", err)
			}
		}
		out = t.encodeWord(sc, text[pos:pos+n], out)
		pos += n
	}
	return out, nil
}

// sanitize replaces every byte of an invalid UTF-8 sequence with U+FFFD, as
// llama.cpp's BPE pre-tokenizer does.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// partition splits text around special and added tokens (llama.cpp's
// tokenizer_st_partition, longest tokens first) when parseSpecial is set;
// otherwise only around user-defined ones (see Encode).
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{text: text, tok: NoToken}}
	specials := t.specials
	if !parseSpecial {
		specials = t.userDefined
	}
	var next []fragment
	for _, id := range specials {
		a := t.attrs[id]
		tok := t.text.at(id)
		found := false
		for _, f := range frags {
			if f.tok == NoToken && strings.Contains(f.text, tok) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		next = next[:0]
		for _, f := range frags {
			if f.tok != NoToken {
				next = append(next, f)
				continue
			}
			next = splitOn(f.text, tok, id, a, next)
		}
		frags, next = next, frags
	}
	return frags
}

func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func splitOn(s, tok string, id int32, a attr, out []fragment) []fragment {
	for {
		i := strings.Index(s, tok)
		if i < 0 {
			if s != "" {
				out = append(out, fragment{text: s, tok: NoToken})
			}
			return out
		}
		left := s[:i]
		if a&attrLstrip != 0 {
			left = strings.TrimRightFunc(left, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) })
		}
		if left != "" {
			out = append(out, fragment{text: left, tok: NoToken})
		}
		out = append(out, fragment{tok: id})
		s = s[i+len(tok):]
		if a&attrRstrip != 0 {
			s = strings.TrimLeftFunc(s, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) })
		}
	}
}
