package parser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyUnquote decodes the text of a string literal (between its quotes) with
// Python's rules, as Jinja2 does: \<newline> is dropped, \n \t \\ \' \"
// \a \b \f \r \v, \xHH, \uHHHH, \UHHHHHHHH and octal \ooo are decoded, and
// any other backslash stays with the character after it ("\d" is "\d").
func pyUnquote(raw string) (string, error) {
	if !strings.Contains(raw, `\`) {
		return raw, nil
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(raw) {
			return "", errors.New(`\ at end of string`)
		}
		n, err := pyEscape(&b, raw[i+1:])
		if err != nil {
			return "", err
		}
		i += n
	}
	return b.String(), nil
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
