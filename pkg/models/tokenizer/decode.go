package tokenizer

import (
	"unicode/utf8"
)

// DecodeOptions tune Decode and the streaming decoder.
type DecodeOptions struct {
	// Special renders control tokens (e.g. "<|im_end|>", "<s>") as their
	// text; by default they produce nothing.
	Special bool
	// Continuation marks ids that continue earlier text (generated tokens
	// after a prompt): SentencePiece's leading space of the first piece is
	// kept. By default the ids start the text and, for vocabularies that add
	// a space prefix when encoding, that one leading space is removed.
	Continuation bool
}

// Decode converts ids to text: the raw bytes of every token's piece joined,
// control tokens omitted, with SentencePiece's added leading space removed.
// The result is a string of bytes and may be invalid UTF-8 when ids end in
// the middle of a character.
func (t *Tokenizer) Decode(ids []int32) string {
	return t.DecodeWith(ids, DecodeOptions{})
}

// DecodeWith is Decode with options.
func (t *Tokenizer) DecodeWith(ids []int32, o DecodeOptions) string {
	d := t.NewDecoderWith(o)
	buf := make([]byte, 0, len(ids)*4)
	for _, id := range ids {
		buf = d.appendPiece(buf, id)
	}
	return string(buf)
}

// StreamDecoder turns ids into text one at a time for streaming. Add never
// returns part of a UTF-8 character: bytes of an unfinished character are held
// until it completes. The concatenation of every Add and the final Flush
// equals DecodeWith(ids, same options).
type StreamDecoder struct {
	t       *Tokenizer
	pt      pieceTable
	o       DecodeOptions
	started bool // a piece has produced text (the leading-space rule is spent)
	pending []byte
}

// NewDecoder returns a streaming decoder with Decode's defaults.
func (t *Tokenizer) NewDecoder() *StreamDecoder { return t.NewDecoderWith(DecodeOptions{}) }

// NewDecoderWith returns a streaming decoder with options; generation after
// a prompt wants DecodeOptions{Continuation: true}.
func (t *Tokenizer) NewDecoderWith(o DecodeOptions) *StreamDecoder {
	return &StreamDecoder{t: t, pt: t.pieceTable(), o: o, started: o.Continuation}
}

func (d *StreamDecoder) appendPiece(dst []byte, id int32) []byte {
	p := d.pt.bytes(id, d.o.Special)
	if len(p) == 0 {
		return dst
	}
	if !d.started {
		d.started = true
		if d.t.addSpacePrefix && p[0] == ' ' {
			p = p[1:]
		}
	}
	return append(dst, p...)
}

// Add feeds one id and returns the text that is now complete.
func (d *StreamDecoder) Add(id int32) string {
	d.pending = d.appendPiece(d.pending, id)
	n := completePrefix(d.pending)
	if n == 0 {
		return ""
	}
	out := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Flush returns whatever is held back (an unfinished character's bytes)
// and resets the hold.
func (d *StreamDecoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}

// Pending reports how many bytes are held back.
func (d *StreamDecoder) Pending() int { return len(d.pending) }

// completePrefix returns the length of b without a trailing unfinished (but
// so far valid) UTF-8 sequence. Invalid bytes are not held: they can never
// complete.
func completePrefix(b []byte) int {
	// look at most 3 bytes back for the start of a multi-byte sequence
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return len(b) // ASCII: everything before is settled
		}
		if c >= 0xC0 { // a lead byte
			need := 0
			switch {
			case c >= 0xF0 && c <= 0xF4:
				need = 4
			case c >= 0xE0:
				need = 3
			case c >= 0xC2:
				need = 2
			}
			if need > k && validPrefix(b[len(b)-k:]) {
				return len(b) - k
			}
			return len(b)
		}
	}
	return len(b)
}

// validPrefix reports whether p (lead byte plus continuation bytes) can
// still become a valid character: complete it with the smallest allowed
// continuation bytes and decode.
func validPrefix(p []byte) bool {
	var probe [4]byte
	n := copy(probe[:], p)
	if n == 1 {
		switch p[0] {
		case 0xE0:
			probe[1], n = 0xA0, 2
		case 0xF0:
			probe[1], n = 0x90, 2
		}
	}
	for ; n < 4; n++ {
		probe[n] = 0x80
	}
	for l := 2; l <= 4; l++ {
		if r, size := utf8.DecodeRune(probe[:l]); r != utf8.RuneError && size == l {
			return true
		}
	}
	return false
}
