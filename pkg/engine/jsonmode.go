package engine

// JSON mode: a byte-level validator of JSON-object prefixes. The scheduler
// feeds it the text of every generated token and, before each sample, asks
// which vocabulary tokens keep the output a valid prefix of one JSON object.
// When the token budget runs low it only allows tokens that bring the object
// closer to closed, so a request with room for it always ends with an object
// that parses. Numbers are kept within float64 range so every JSON parser
// accepts them.

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parser modes: what the validator expects next.
const (
	jStart        uint8 = iota // before the top-level '{'
	jKeyOrClose                // after '{': a key or '}'
	jKey                       // after ',' in an object: a key
	jColon                     // after a key
	jValue                     // after ':' or ',' in an array
	jValueOrClose              // after '[': a value or ']'
	jCommaOrClose              // after a value inside a container
	jString
	jNumber
	jLiteral
	jDone
)

// Number sub-states.
const (
	nMinus     uint8 = iota // after '-': a digit must follow
	nZero                   // a leading 0
	nInt                    // integer digits
	nDot                    // after '.': a digit must follow
	nFrac                   // fraction digits
	nExp                    // after 'e': sign or digit
	nExpSign                // after the exponent sign: a digit must follow
	nExpDigits              // exponent digits
)

// maxJSONSpace caps runs of whitespace so a model cannot pad forever.
const maxJSONSpace = 16

// jsonState is the validator state; copy it to try a continuation.
type jsonState struct {
	stack   []byte // open containers: '{' or '['
	mode    uint8
	num     uint8
	isKey   bool
	esc     bool   // after a backslash in a string
	hexLeft uint8  // \u digits still due
	utfLeft uint8  // UTF-8 continuation bytes still due
	lit     string // rest of true/false/null
	space   int    // consecutive whitespace
	digits  int    // digits in the current number's mantissa
	expDigs int    // digits in its exponent
}

// Number limits: a mantissa of at most 17 digits and a two-digit exponent
// always fit a float64.
const (
	maxJSONDigits    = 17
	maxJSONExpDigits = 2
)

// feed advances the state over text; false means text cannot continue a
// JSON object (the state is then unspecified).
func (s *jsonState) feed(text []byte) bool {
	for _, c := range text {
		if !s.byte(c) {
			return false
		}
	}
	return true
}

// done reports whether the top-level object is closed.
func (s *jsonState) done() bool { return s.mode == jDone }

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *jsonState) byte(c byte) bool {
	switch s.mode {
	case jString:
		return s.stringByte(c)
	case jNumber:
		if s.numberByte(c) {
			return true
		}
		if !s.numberCanEnd() {
			return false
		}
		s.valueDone()
		return s.byte(c)
	case jLiteral:
		if len(s.lit) == 0 || c != s.lit[0] {
			return false
		}
		s.lit = s.lit[1:]
		if len(s.lit) == 0 {
			s.valueDone()
		}
		return true
	case jDone:
		return false
	}
	if isJSONSpace(c) {
		s.space++
		return s.space <= maxJSONSpace
	}
	s.space = 0
	return s.structural(c)
}

// structural handles a non-space byte outside strings, numbers and literals.
func (s *jsonState) structural(c byte) bool {
	switch s.mode {
	case jStart:
		if c != '{' {
			return false
		}
		s.push('{')
		return true
	case jKeyOrClose, jKey:
		if c == '"' {
			s.mode, s.isKey = jString, true
			return true
		}
		if c == '}' && s.mode == jKeyOrClose {
			s.pop()
			return true
		}
		return false
	case jColon:
		if c != ':' {
			return false
		}
		s.mode = jValue
		return true
	case jValue, jValueOrClose:
		if c == ']' && s.mode == jValueOrClose {
			s.pop()
			return true
		}
		return s.startValue(c)
	case jCommaOrClose:
		top := s.stack[len(s.stack)-1]
		switch {
		case c == ',' && top == '{':
			s.mode = jKey
		case c == ',' && top == '[':
			s.mode = jValue
		case c == '}' && top == '{', c == ']' && top == '[':
			s.pop()
		default:
			return false
		}
		return true
	}
	return false
}

func (s *jsonState) startValue(c byte) bool {
	switch {
	case c == '{':
		s.push('{')
	case c == '[':
		s.stack = append(s.stack, '[')
		s.mode = jValueOrClose
	case c == '"':
		s.mode, s.isKey = jString, false
	case c == '-':
		s.mode, s.num, s.digits, s.expDigs = jNumber, nMinus, 0, 0
	case c == '0':
		s.mode, s.num, s.digits, s.expDigs = jNumber, nZero, 1, 0
	case c >= '1' && c <= '9':
		s.mode, s.num, s.digits, s.expDigs = jNumber, nInt, 1, 0
	case c == 't':
		s.mode, s.lit = jLiteral, "rue"
	case c == 'f':
		s.mode, s.lit = jLiteral, "alse"
	case c == 'n':
		s.mode, s.lit = jLiteral, "ull"
	default:
		return false
	}
	return true
}

func (s *jsonState) push(c byte) {
	s.stack = append(s.stack, c)
	s.mode = jKeyOrClose
}

// pop closes the innermost container, which completes a value.
func (s *jsonState) pop() {
	s.stack = s.stack[:len(s.stack)-1]
	s.valueDone()
}

func (s *jsonState) valueDone() {
	if len(s.stack) == 0 {
		s.mode = jDone
		return
	}
	s.mode = jCommaOrClose
}

func (s *jsonState) stringByte(c byte) bool {
	switch {
	case s.utfLeft > 0:
		if c < 0x80 || c > 0xBF {
			return false
		}
		s.utfLeft--
	case s.hexLeft > 0:
		if !isHex(c) {
			return false
		}
		s.hexLeft--
	case s.esc:
		s.esc = false
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			s.hexLeft = 4
		default:
			return false
		}
	case c == '\\':
		s.esc = true
	case c == '"':
		if s.isKey {
			s.mode = jColon
		} else {
			s.valueDone()
		}
	case c < 0x20 || c == 0x7F:
		return false
	case c < 0x80:
	case c >= 0xC2 && c <= 0xDF:
		s.utfLeft = 1
	case c >= 0xE0 && c <= 0xEF:
		s.utfLeft = 2
	case c >= 0xF0 && c <= 0xF4:
		s.utfLeft = 3
	default:
		return false
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numberByte extends the number; false means c is not part of it.
func (s *jsonState) numberByte(c byte) bool {
	if isDigit(c) {
		if s.num >= nExp {
			s.expDigs++
		} else {
			s.digits++
		}
		if s.digits > maxJSONDigits || s.expDigs > maxJSONExpDigits {
			return false
		}
	}
	switch s.num {
	case nMinus:
		switch {
		case c == '0':
			s.num = nZero
		case isDigit(c):
			s.num = nInt
		default:
			return false
		}
	case nZero, nInt, nFrac:
		switch {
		case isDigit(c) && s.num != nZero:
		case c == '.' && s.num != nFrac:
			s.num = nDot
		case c == 'e' || c == 'E':
			s.num = nExp
		default:
			return false
		}
	case nDot:
		if !isDigit(c) {
			return false
		}
		s.num = nFrac
	case nExp:
		switch {
		case c == '+' || c == '-':
			s.num = nExpSign
		case isDigit(c):
			s.num = nExpDigits
		default:
			return false
		}
	case nExpSign, nExpDigits:
		if !isDigit(c) {
			return false
		}
		s.num = nExpDigits
	}
	return true
}

func (s *jsonState) numberCanEnd() bool {
	switch s.num {
	case nZero, nInt, nFrac, nExpDigits:
		return true
	}
	return false
}

// closeCost is the fewest bytes that close the object from this state.
func (s *jsonState) closeCost() int {
	n := len(s.stack)
	switch s.mode {
	case jStart:
		return 2 // {}
	case jKey:
		n += 4 // "":0
	case jColon:
		n += 2 // :0
	case jValue:
		n++ // 0
	case jString:
		n += 1 + int(s.hexLeft) + int(s.utfLeft)
		if s.esc {
			n++
		}
		if s.isKey {
			n += 2
		}
	case jNumber:
		if !s.numberCanEnd() {
			n++
		}
	case jLiteral:
		n += len(s.lit)
	}
	return n
}

// clone copies the state into dst, reusing dst's stack storage.
func (s *jsonState) cloneInto(dst *jsonState) {
	stack := append(dst.stack[:0], s.stack...)
	*dst = *s
	dst.stack = stack
}

// jsonMask computes the allowed-token bitset for the next sample. texts are
// the vocabulary's token texts (nil for tokens never allowed). maxCost >= 0
// only allows tokens after which the object can still be closed in maxCost
// bytes (one per remaining token); < 0 means no budget. It returns false
// when no token may follow.
func jsonMask(s *jsonState, texts [][]byte, maxCost int, mask []uint64) bool {
	found, _ := jsonMaskBudget(s, texts, maxCost, mask)
	return found
}

// jsonMaskBudget is jsonMask that also reports cut: the budget (maxCost)
// refused a token the JSON grammar allows, so the answer is being cut short
// by the token budget rather than ending where the model would end it. It
// runs on the scheduler goroutine, before a step every stream waits for, so
// large vocabularies (150k tokens: ~20 ms on one core) are split across the
// cores, 64-token words apiece.
func jsonMaskBudget(s *jsonState, texts [][]byte, maxCost int, mask []uint64) (found, cut bool) {
	clear(mask)
	workers := min(runtime.GOMAXPROCS(0), (len(mask)+maskWordsPerWorker-1)/maskWordsPerWorker)
	if workers <= 1 {
		return jsonMaskRange(s, texts, maxCost, mask, 0, len(mask))
	}
	per := (len(mask) + workers - 1) / workers
	var anyFound, anyCut atomic.Bool
	var wg sync.WaitGroup
	for lo := 0; lo < len(mask); lo += per {
		hi := min(lo+per, len(mask))
		wg.Go(func() {
			f, c := jsonMaskRange(s, texts, maxCost, mask, lo, hi)
			if f {
				anyFound.Store(true)
			}
			if c {
				anyCut.Store(true)
			}
		})
	}
	wg.Wait()
	return anyFound.Load(), anyCut.Load()
}

// maskWordsPerWorker is the least work (64 tokens a word) worth a goroutine.
const maskWordsPerWorker = 256

// jsonMaskRange fills mask words [lo, hi); s is only read. cut reports a
// token the grammar allows that the budget refused.
func jsonMaskRange(s *jsonState, texts [][]byte, maxCost int, mask []uint64, lo, hi int) (found, cut bool) {
	var trial jsonState
	for id := lo * 64; id < min(hi*64, len(texts)); id++ {
		t := texts[id]
		if len(t) == 0 {
			continue
		}
		s.cloneInto(&trial)
		if !trial.feed(t) {
			continue
		}
		if maxCost >= 0 && trial.closeCost() > maxCost {
			cut = true
			continue
		}
		mask[id/64] |= 1 << (uint(id) % 64)
		found = true
	}
	return found, cut
}
