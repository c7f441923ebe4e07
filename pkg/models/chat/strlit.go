package chat

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rawOpen and rawClose match {% raw %} and {% endraw %} (compiled once, read-only).
var (
	rawOpen  = regexp.MustCompile(`^\{%[-+]?\s*raw\s*[-+]?%\}`)
	rawClose = regexp.MustCompile(`\{%[-+]?\s*endraw\s*[-+]?%\}`)
)

// normalizeStringLiterals rewrites every string literal that contains a
// backslash so gonja reads the value Jinja2 does. Jinja2 decodes literals
// with Python's unicode-escape rules ("\<newline>" is dropped, "\d" stays
// "\d", "\x41" is "A"); gonja runs them through Go's strconv.Unquote, which
// keeps "\<newline>" as a literal "\n", rejects "\d" and ends a literal
// like 'a\\' at the wrong quote. The Python value is written back in a form
// both parsers read alike (see gonjaLiteral). Literals without a backslash,
// text outside tags, comments and raw blocks are left untouched.
func normalizeStringLiterals(src string) (string, error) {
	if !strings.Contains(src, `\`) {
		return src, nil
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 || i+j+1 == len(src) {
			b.WriteString(src[i:])
			break
		}
		j += i
		b.WriteString(src[i:j])
		next, err := copyTag(&b, src, j)
		if err != nil {
			return "", err
		}
		i = next
	}
	return b.String(), nil
}

// copyTag copies the tag (or plain '{') at src[pos] to b, rewriting its
// string literals, and returns the index after it.
func copyTag(b *strings.Builder, src string, pos int) (int, error) {
	var end string
	switch src[pos+1] {
	case '#':
		k := strings.Index(src[pos:], "#}")
		if k < 0 {
			b.WriteString(src[pos:])
			return len(src), nil
		}
		b.WriteString(src[pos : pos+k+2])
		return pos + k + 2, nil
	case '%':
		if rawOpen.MatchString(src[pos:]) {
			loc := rawClose.FindStringIndex(src[pos:])
			if loc == nil {
				b.WriteString(src[pos:])
				return len(src), nil
			}
			b.WriteString(src[pos : pos+loc[1]])
			return pos + loc[1], nil
		}
		end = "%}"
	case '{':
		end = "}}"
	default:
		b.WriteByte('{')
		return pos + 1, nil
	}
	b.WriteString(src[pos : pos+2])
	depth := 0
	for i := pos + 2; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\'' || c == '"':
			raw, after, err := scanPyLiteral(src, i)
			if err != nil {
				b.WriteString(src[i:]) // leave it to gonja's error
				return len(src), nil
			}
			if !strings.Contains(raw, `\`) {
				b.WriteString(src[i:after])
			} else {
				lit, lost, err := gonjaLiteral(raw)
				if err != nil {
					return 0, fmt.Errorf("string literal %s: %w", src[i:after], err)
				}
				b.WriteString(lit)
				if lost > 0 && safeToBreakBefore(src[after:]) {
					// a "\<newline>" took a line: keep error line numbers right
					b.WriteString(strings.Repeat("\n", lost))
				}
			}
			i = after - 1
		case depth == 0 && strings.HasPrefix(src[i:], end):
			b.WriteString(end)
			return i + 2, nil
		case c == '(' || c == '[' || c == '{':
			depth++
			b.WriteByte(c)
		case c == ')' || c == ']' || c == '}':
			depth = max(depth-1, 0)
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return len(src), nil
}

// scanPyLiteral reads the quoted literal starting at src[pos] the way
// Jinja2's lexer does (a backslash escapes any character) and returns its
// content and the index after the closing quote.
func scanPyLiteral(src string, pos int) (raw string, end int, err error) {
	quote := src[pos]
	for i := pos + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case quote:
			return src[pos+1 : i], i + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated string literal at byte %d", pos)
}

// gonjaLiteral decodes the content of a Python string literal (Python's
// unicode-escape rules) and writes the value as a single-quoted literal
// that gonja decodes to the same value: raw text is kept (raw newlines
// too, so the line count stays), and every backslash, quote and line break
// that came from an escape is written as \xHH, a form that neither gonja's
// quote scan, nor its \" / \' replacement, nor strconv.Unquote alters. lost
// counts the "\<newline>" continuations, which drop a line.
func gonjaLiteral(raw string) (lit string, lost int, err error) {
	var b, esc strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			writeGonjaByte(&b, c, false)
			continue
		}
		if i+1 == len(raw) {
			return "", 0, errors.New(`\ at end of string`)
		}
		i++
		if raw[i] == '\n' {
			lost++
		}
		esc.Reset()
		n, err := pyEscape(&esc, raw[i:])
		if err != nil {
			return "", 0, err
		}
		for _, c := range []byte(esc.String()) {
			writeGonjaByte(&b, c, true)
		}
		i += n - 1
	}
	b.WriteByte('\'')
	return b.String(), lost, nil
}

// writeGonjaByte writes one byte of a literal's value; escaped says it came
// from an escape sequence (a newline then must not start a new line).
func writeGonjaByte(b *strings.Builder, c byte, escaped bool) {
	switch {
	case c == '\\' || c == '\'' || c == '"' || c == '\r' || (c == '\n' && escaped):
		fmt.Fprintf(b, `\x%02x`, c)
	default:
		b.WriteByte(c)
	}
}

// safeToBreakBefore reports whether a newline may precede rest inside a
// tag: gonja mis-parses some expressions broken before a keyword (e.g.
// "'a'\nif c else 'b'"), so only punctuation and tag ends qualify.
func safeToBreakBefore(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	for _, p := range []string{"%}", "-%}", "+%}", "}}", "-}}", ")", "]", "}", ",", "|", "~", "+", "."} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// pyEscape writes the value of the escape whose text (after the backslash)
// starts s and returns how many bytes of s it used.
func pyEscape(b *strings.Builder, s string) (int, error) {
	c := s[0]
	if i := strings.IndexByte("\n\\'\"abfnrtv", c); i >= 0 {
		b.WriteString([]string{"", `\`, "'", `"`, "\a", "\b", "\f", "\n", "\r", "\t", "\v"}[i])
		return 1, nil
	}
	switch c {
	case 'x', 'u', 'U':
		digits := 2
		if c == 'u' {
			digits = 4
		} else if c == 'U' {
			digits = 8
		}
		if len(s) < 1+digits {
			return 0, fmt.Errorf(`truncated \%c escape`, c)
		}
		v, err := strconv.ParseUint(s[1:1+digits], 16, 32)
		if err != nil || v > utf8.MaxRune {
			return 0, fmt.Errorf(`bad \%c escape %q`, c, s[:1+digits])
		}
		b.WriteRune(rune(v))
		return 1 + digits, nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n := 1
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[:n], 8, 32)
		b.WriteRune(rune(v))
		return n, nil
	}
	b.WriteByte('\\') // unknown escapes keep their backslash
	_, n := utf8.DecodeRuneInString(s)
	b.WriteString(s[:n])
	return n, nil
}
