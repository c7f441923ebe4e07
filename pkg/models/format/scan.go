package format

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

type scanState int

const (
	scanMore scanState = iota // the value may still complete
	scanDone                  // s[:n] is one balanced value
	scanBad                   // s cannot start a JSON object or array
)

// scanJSON finds the end of the JSON object or array that s starts with,
// tracking nesting and strings (the value itself is validated later). It
// rejects early what cannot be JSON: an object whose first non-space byte
// after "{" is not a quote or "}".
func scanJSON(s string) (int, scanState) {
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return 0, scanBad
	}
	if s[0] == '{' {
		t := strings.TrimLeft(s[1:], " \t\r\n")
		if t != "" && t[0] != '"' && t[0] != '}' {
			return 0, scanBad
		}
	}
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1, scanDone
			}
		}
	}
	return 0, scanMore
}

var builtinRe = regexp.MustCompile(`(?s)^([A-Za-z_][A-Za-z0-9_]*)\.call\((.*)\)$`)

// builtinCall parses Llama's built-in tool syntax, e.g.
// brave_search.call(query="weather in Paris").
func builtinCall(b string) (Call, bool) {
	m := builtinRe.FindStringSubmatch(b)
	if m == nil {
		return Call{}, false
	}
	args, err := parseKwargs(m[2])
	if err != nil {
		return Call{}, false
	}
	out, err := json.Marshal(args)
	if err != nil {
		return Call{}, false
	}
	return Call{Name: m[1], Arguments: string(out)}, true
}

// parseKwargs parses Python keyword arguments whose values are string,
// number, True/False or None literals.
func parseKwargs(s string) (map[string]any, error) {
	args := map[string]any{}
	rest := strings.TrimSpace(s)
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("expected key=value in %q", rest)
		}
		key := strings.TrimSpace(rest[:eq])
		if !identRe.MatchString(key) {
			return nil, fmt.Errorf("bad argument name %q", key)
		}
		v, n, err := pyLiteral(strings.TrimLeft(rest[eq+1:], " "))
		if err != nil {
			return nil, err
		}
		args[key] = v
		rest = strings.TrimSpace(strings.TrimLeft(rest[eq+1:], " ")[n:])
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("expected \",\" before %q", rest)
		}
		rest = strings.TrimSpace(rest[1:])
	}
	return args, nil
}

var (
	identRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	numberRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?`)
)

// pyLiteral reads one literal at the start of s, returning it and its length.
func pyLiteral(s string) (any, int, error) {
	if s == "" {
		return nil, 0, fmt.Errorf("missing value")
	}
	if q := s[0]; q == '"' || q == '\'' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				return unquotePy(s[:i+1]), i + 1, nil
			}
		}
		return nil, 0, fmt.Errorf("unterminated string")
	}
	for lit, v := range map[string]any{"True": true, "False": false, "None": nil} {
		if strings.HasPrefix(s, lit) {
			return v, len(lit), nil
		}
	}
	if m := numberRe.FindString(s); m != "" {
		f, err := strconv.ParseFloat(m, 64)
		return f, len(m), err
	}
	return nil, 0, fmt.Errorf("unsupported value %q", s)
}

// unquotePy unquotes a Python string literal in single or double quotes
// (escapes: \n \t \r \\ \' \"; any other backslash is kept).
func unquotePy(q string) string {
	var b strings.Builder
	inner := q[1 : len(q)-1]
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' || i+1 == len(inner) {
			b.WriteByte(c)
			continue
		}
		i++
		switch inner[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(inner[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(inner[i])
		}
	}
	return b.String()
}
