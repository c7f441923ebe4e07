package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// ErrRegexTimeout: a pre-tokenizer regex that needs the backtracking engine
// ran longer than RegexMatchTimeout on one match (a catastrophic pattern
// such as (x+x+)+(?=y) in a tokenizer.json).
var ErrRegexTimeout = errors.New("tokenizer: pre-tokenizer regex timed out")

// RegexMatchTimeout bounds one match of a pre-tokenizer regex that Go's
// linear-time engine cannot run (lookarounds, backreferences). Real
// pre-tokenizer matches take microseconds.
const RegexMatchTimeout = time.Second

// splitRegex is one compiled pre-tokenizer regex. Patterns RE2 can express
// run on Go's linear-time regexp; the idiom \s+(?!\S)|\s+ of every common
// pre-tokenizer is rewritten as the hand-written splitters do (a white-space
// run, less its last character when a non-space follows). Anything else
// (other lookarounds, backreferences, anchors that depend on the text before
// the match) runs on regexp2 with RegexMatchTimeout.
type splitRegex struct {
	pattern string         // as written, for errors
	re      *regexp.Regexp // linear-time engine; nil when bt is used
	ws      wsRewrite      // what re's group 1 stands for
	bt      *regexp2.Regexp
}

// wsRewrite tells which white-space idiom a translated pattern's group 1
// replaced.
type wsRewrite int

const (
	wsNone   wsRewrite = iota
	wsOrRun            // \s+(?!\S)|\s+
	wsStrict           // \s+(?!\S) as the last alternative: a lone space before a non-space does not match
)

func compileSplitRegex(pattern, compiled string) (*splitRegex, error) {
	if goPat, ws, ok := translateRE2(compiled); ok {
		if re, err := regexp.Compile(goPat); err == nil {
			return &splitRegex{pattern: pattern, re: re, ws: ws}, nil
		}
	}
	bt, err := regexp2.Compile(compiled, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("%w: pre-tokenizer regex %q: %w", ErrUnsupported, pattern, err)
	}
	bt.MatchTimeout = RegexMatchTimeout
	return &splitRegex{pattern: pattern, bt: bt}, nil
}

// ctxCheckEvery is how many matches pass between checks of the context.
const ctxCheckEvery = 64

// Each match is linear in the text, but a pattern such as a[^z]*z|a makes
// every one of n matches scan the rest of the text: n² steps. So splitting
// one text with regexes has a time budget of RegexMatchTimeout plus
// regexBudgetPerByte for each byte, far above what real patterns need (a
// few microseconds per byte on a loaded machine).
const regexBudgetPerByte = 20 * time.Microsecond

// errRegexBudget is the cause of a split's context ending at its budget.
var errRegexBudget = errors.New("pre-tokenizer time budget spent")

// withRegexBudget bounds the regex steps of splitting a text of n bytes.
func withRegexBudget(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, RegexMatchTimeout+time.Duration(n)*regexBudgetPerByte, errRegexBudget)
}

// ctxErr reports why ctx ended: the regex budget (naming the pattern) or
// the caller's cancellation.
func (r *splitRegex) ctxErr(ctx context.Context, chunk int) error {
	if ctx.Err() == nil {
		return nil
	}
	if errors.Is(context.Cause(ctx), errRegexBudget) {
		return fmt.Errorf("%w: %q ran past the time budget for a %d-character text", ErrRegexTimeout, r.pattern, chunk)
	}
	return fmt.Errorf("tokenizer: %w", ctx.Err())
}

// split appends the lengths (in runes) of chunk's matches and the gaps
// between them to out, the way regexp2's FindNextMatch walks a text
// (after an empty match the search resumes one character on).
func (r *splitRegex) split(ctx context.Context, chunk []rune, buf *[]byte, out []int) ([]int, error) {
	if r.bt != nil {
		return r.splitBacktrack(ctx, chunk, out)
	}
	b := (*buf)[:0]
	for _, c := range chunk {
		b = utf8.AppendRune(b, c)
	}
	*buf = b
	last, pos := 0, 0 // byte offsets
	emit := func(from, to int) {
		if to > from {
			out = append(out, utf8.RuneCount(b[from:to]))
		}
	}
	for n := 1; pos <= len(b); n++ {
		if n%ctxCheckEvery == 0 {
			if err := r.ctxErr(ctx, len(chunk)); err != nil {
				return out, err
			}
		}
		loc := r.re.FindSubmatchIndex(b[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if r.ws != wsNone && loc[2] >= 0 && end < len(b) {
			_, size := utf8.DecodeLastRune(b[start:end])
			switch {
			case end-size > start:
				end -= size // \s+(?!\S): leave the last space to the next word
			case r.ws == wsStrict:
				pos = end // no match at start: search on from the next character
				continue
			}
		}
		emit(last, start)
		emit(start, end)
		last = end
		if end > start {
			pos = end
			continue
		}
		if start == len(b) {
			break
		}
		_, size := utf8.DecodeRune(b[start:])
		pos = start + size
	}
	emit(last, len(b))
	return out, nil
}

func (r *splitRegex) splitBacktrack(ctx context.Context, chunk []rune, out []int) ([]int, error) {
	m, err := r.bt.FindRunesMatch(chunk)
	last := 0
	for n := 1; err == nil && m != nil; n++ {
		if n%ctxCheckEvery == 0 {
			if cerr := r.ctxErr(ctx, len(chunk)); cerr != nil {
				return out, cerr
			}
		}
		if m.Index > last {
			out = append(out, m.Index-last)
		}
		if m.Length > 0 {
			out = append(out, m.Length)
		}
		last = m.Index + m.Length
		m, err = r.bt.FindNextMatch(m)
	}
	if err != nil {
		// regexp2's error quotes the whole input (the prompt): name the
		// pattern instead.
		return out, fmt.Errorf("%w: %q took longer than %v on a %d-character chunk of the prompt", ErrRegexTimeout, r.pattern, RegexMatchTimeout, len(chunk))
	}
	if last < len(chunk) {
		out = append(out, len(chunk)-last)
	}
	return out, nil
}

// wsIdiom is the tail of every common pre-tokenizer regex; wsLookahead
// its first half, which GPT-2's pattern ends with.
const (
	wsIdiom     = `\s+(?!\S)|\s+`
	wsLookahead = `\s+(?!\S)`
)

// spaceRanges is regexp2's \s (unicode.IsSpace) as the inside of a Go
// character class.
var spaceRanges = func() string {
	var b strings.Builder
	add := func(lo, hi, stride uint32) {
		if stride == 1 {
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, hi)
			return
		}
		for c := lo; c <= hi; c += stride {
			fmt.Fprintf(&b, `\x{%X}`, c)
		}
	}
	for _, r := range unicode.White_Space.R16 {
		add(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.White_Space.R32 {
		add(r.Lo, r.Hi, r.Stride)
	}
	return b.String()
}()

// translateRE2 rewrites a regexp2 (.NET syntax) pattern into Go syntax with
// the same matches: \s and \d keep their Unicode meaning, captures become
// plain groups, (?i:..) over ASCII letters becomes explicit classes, and the
// \s+(?!\S)|\s+ idiom (a whole top-level alternative) becomes group 1. ok is
// false when the pattern uses anything RE2 cannot express the same way.
func translateRE2(p string) (string, wsRewrite, bool) {
	t := translator{src: []rune(p)}
	if !t.run() {
		return "", wsNone, false
	}
	return t.out.String(), t.ws, true
}

type translator struct {
	src   []rune
	i     int
	out   strings.Builder
	ws    wsRewrite
	fold  []bool // per open group: case-insensitive
	atAlt bool   // at the start of a top-level alternative
}

func (t *translator) folding() bool { return len(t.fold) > 0 && t.fold[len(t.fold)-1] }

func (t *translator) rest() string { return string(t.src[t.i:]) }

func (t *translator) run() bool {
	t.atAlt = true
	for t.i < len(t.src) {
		if t.atAlt && len(t.fold) == 0 {
			if kind, n := t.idiom(); kind != wsNone {
				if t.ws != wsNone {
					return false
				}
				t.out.WriteString(`([` + spaceRanges + `]+)`)
				t.ws, t.i, t.atAlt = kind, t.i+n, false
				continue
			}
		}
		t.atAlt = false
		if !t.token() {
			return false
		}
	}
	return len(t.fold) == 0
}

// idiom reports a white-space idiom forming the whole top-level alternative
// at t.i, and its length in runes.
func (t *translator) idiom() (wsRewrite, int) {
	r := t.rest()
	if strings.HasPrefix(r, wsIdiom) && (len(r) == len(wsIdiom) || r[len(wsIdiom)] == '|') {
		return wsOrRun, len(wsIdiom)
	}
	if r == wsLookahead {
		return wsStrict, len(wsLookahead)
	}
	return wsNone, 0
}

// token translates one element outside a character class.
func (t *translator) token() bool {
	c := t.src[t.i]
	switch c {
	case '\\':
		return t.escape(false)
	case '[':
		if t.folding() {
			return false
		}
		return t.class()
	case '(':
		return t.group()
	case ')':
		if len(t.fold) == 0 {
			return false
		}
		t.fold = t.fold[:len(t.fold)-1]
		t.out.WriteRune(c)
	case '|':
		t.atAlt = len(t.fold) == 0
		t.out.WriteRune(c)
	case '^', '$':
		return false // ^ sees the text before the match; .NET's $ matches before a final \n
	default:
		if t.folding() && c < utf8.RuneSelf && unicode.IsLetter(c) {
			t.out.WriteString(foldClass(c))
		} else if t.folding() && c >= utf8.RuneSelf {
			return false
		} else {
			t.out.WriteRune(c)
		}
	}
	t.i++
	return true
}

// foldClass is the class regexp2 matches for an ASCII letter under (?i).
func foldClass(c rune) string {
	lo, up := unicode.ToLower(c), unicode.ToUpper(c)
	if lo == 'k' {
		return `[kK\x{212A}]`
	}
	return "[" + string(lo) + string(up) + "]"
}

func (t *translator) group() bool {
	r := t.rest()
	switch {
	case strings.HasPrefix(r, "(?:"):
		t.fold = append(t.fold, t.folding())
		t.i += 3
	case strings.HasPrefix(r, "(?i:"):
		t.fold = append(t.fold, true)
		t.i += 4
	case strings.HasPrefix(r, "(?"):
		return false // lookarounds, atomic and named groups, inline flags, conditionals
	default:
		t.fold = append(t.fold, t.folding())
		t.i++
	}
	t.out.WriteString("(?:")
	return true
}

// class translates [...]; case-insensitive classes are left to regexp2.
func (t *translator) class() bool {
	t.out.WriteRune('[')
	t.i++
	if t.i < len(t.src) && t.src[t.i] == '^' {
		t.out.WriteRune('^')
		t.i++
	}
	first := true
	for t.i < len(t.src) {
		c := t.src[t.i]
		switch {
		case c == ']' && !first:
			t.out.WriteRune(']')
			t.i++
			return true
		case c == '\\':
			if !t.escape(true) {
				return false
			}
			first = false
			continue
		case c == '[':
			if t.i > 0 && t.src[t.i-1] == '-' {
				return false // .NET class subtraction
			}
			t.out.WriteString(`\[`)
		default:
			t.out.WriteRune(c)
		}
		first = false
		t.i++
	}
	return false
}

// escape translates the escape at t.i (inside a class when inClass).
func (t *translator) escape(inClass bool) bool {
	if t.i+1 >= len(t.src) {
		return false
	}
	c := t.src[t.i+1]
	t.i += 2
	switch c {
	case 's':
		if inClass {
			t.out.WriteString(spaceRanges)
		} else {
			t.out.WriteString("[" + spaceRanges + "]")
		}
	case 'S':
		if inClass {
			return false
		}
		t.out.WriteString("[^" + spaceRanges + "]")
	case 'd':
		t.out.WriteString(`\p{Nd}`)
	case 'D':
		t.out.WriteString(`\P{Nd}`)
	case 'p', 'P':
		if t.folding() || t.i >= len(t.src) || t.src[t.i] != '{' {
			return false
		}
		end := strings.IndexRune(t.rest(), '}')
		if end < 0 {
			return false
		}
		t.out.WriteString(`\` + string(c) + t.rest()[:end+1])
		t.i += len([]rune(t.rest()[:end+1]))
	case 'u':
		if t.i+4 > len(t.src) {
			return false
		}
		t.out.WriteString(`\x{` + string(t.src[t.i:t.i+4]) + `}`)
		t.i += 4
	case 'x':
		if t.i+2 > len(t.src) {
			return false
		}
		t.out.WriteString(`\x{` + string(t.src[t.i:t.i+2]) + `}`)
		t.i += 2
	case 't', 'n', 'r', 'f', 'v', 'a':
		t.out.WriteString(`\` + string(c))
	case 'e':
		t.out.WriteString(`\x{1B}`)
	case 'b':
		if !inClass {
			return false // a word boundary sees the text before the match
		}
		t.out.WriteString(`\x{8}`)
	case 'z':
		if inClass {
			return false
		}
		t.out.WriteString(`\z`)
	default:
		if c >= utf8.RuneSelf || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsSpace(c) {
			return false // \w, \A, \G, \Z, backreferences, octal, \k<..>, ...
		}
		t.out.WriteString(`\` + string(c))
	}
	return true
}
