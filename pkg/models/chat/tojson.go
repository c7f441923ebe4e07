package chat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// jsonOptions mirror the keyword arguments of Python's json.dumps that
// Hugging Face's tojson filter forwards.
type jsonOptions struct {
	indent      string // "" with hasIndent=false: compact
	hasIndent   bool
	itemSep     string
	keySep      string
	ensureASCII bool
	sortKeys    bool
}

// defaultJSONOptions are HF's defaults: ensure_ascii=False, no indent,
// separators (", ", ": ").
func defaultJSONOptions() jsonOptions {
	return jsonOptions{itemSep: ", ", keySep: ": "}
}

// pyJSON serialises a template value exactly like Python's json.dumps.
func pyJSON(v *exec.Value, opt jsonOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, opt, 0, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

const maxJSONDepth = 200

func writeJSON(b *strings.Builder, v *exec.Value, opt jsonOptions, level, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("tojson: value nested deeper than %d levels (circular?)", maxJSONDepth)
	}
	switch {
	case v == nil || v.IsNil():
		b.WriteString("null")
	case v.IsError():
		return fmt.Errorf("tojson: %s", v.Error())
	case v.IsBool():
		if v.Bool() {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case v.IsInteger():
		b.WriteString(v.String())
	case v.IsFloat():
		b.WriteString(pyFloatJSON(v.Float()))
	case v.IsString():
		writeJSONString(b, v.String(), opt.ensureASCII)
	case v.IsDict():
		return writeJSONObject(b, v, opt, level, depth)
	case v.IsList():
		return writeJSONArray(b, v, opt, level, depth)
	default:
		return fmt.Errorf("tojson: object of type %T is not JSON serializable", v.Interface())
	}
	return nil
}

func writeJSONArray(b *strings.Builder, v *exec.Value, opt jsonOptions, level, depth int) error {
	n := v.Len()
	if n == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteString(opt.itemSep)
		}
		newline(b, opt, level+1)
		if err := writeJSON(b, v.Index(i), opt, level+1, depth+1); err != nil {
			return err
		}
	}
	newline(b, opt, level)
	b.WriteByte(']')
	return nil
}

type jsonPair struct {
	key string
	val *exec.Value
}

func writeJSONObject(b *strings.Builder, v *exec.Value, opt jsonOptions, level, depth int) error {
	var pairs []jsonPair
	var keyErr error
	iterateItems(v, func(k, val *exec.Value) bool {
		key, err := jsonKey(k)
		if err != nil {
			keyErr = err
			return false
		}
		pairs = append(pairs, jsonPair{key, val})
		return true
	})
	if keyErr != nil {
		return keyErr
	}
	if len(pairs) == 0 {
		b.WriteString("{}")
		return nil
	}
	if opt.sortKeys {
		slices.SortStableFunc(pairs, func(a, c jsonPair) int { return strings.Compare(a.key, c.key) })
	}
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(opt.itemSep)
		}
		newline(b, opt, level+1)
		writeJSONString(b, p.key, opt.ensureASCII)
		b.WriteString(opt.keySep)
		if err := writeJSON(b, p.val, opt, level+1, depth+1); err != nil {
			return err
		}
	}
	newline(b, opt, level)
	b.WriteByte('}')
	return nil
}

func newline(b *strings.Builder, opt jsonOptions, level int) {
	if !opt.hasIndent {
		return
	}
	b.WriteByte('\n')
	for range level {
		b.WriteString(opt.indent)
	}
}

// jsonKey converts a mapping key the way json.dumps does.
func jsonKey(k *exec.Value) (string, error) {
	switch {
	case k.IsString():
		return k.String(), nil
	case k.IsNil():
		return "null", nil
	case k.IsBool():
		if k.Bool() {
			return "true", nil
		}
		return "false", nil
	case k.IsInteger():
		return k.String(), nil
	case k.IsFloat():
		return pyFloatJSON(k.Float()), nil
	}
	return "", fmt.Errorf("tojson: keys must be str, int, float, bool or None, not %T", k.Interface())
}

// writeJSONString quotes s like json.dumps: \" \\ \n \r \t \b \f, other
// control characters as \u00XX; non-ASCII kept unless ensureASCII.
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`) // invalid UTF-8 cannot occur in Python str
		case ensureASCII && r > 0x7e:
			writeASCIIEscape(b, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func writeASCIIEscape(b *strings.Builder, r rune) {
	if r == 0x7f {
		b.WriteRune(r) // Python leaves DEL as is
		return
	}
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// pyFloatJSON formats f like Python's float.__repr__ (what json.dumps uses).
func pyFloatJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyFloatRepr(f)
}

// pyFloatRepr is Python's repr(float): shortest round-trip digits,
// scientific notation when the exponent is < -4 or >= 16.
func pyFloatRepr(f float64) string {
	if math.IsInf(f, 0) {
		if f > 0 {
			return "inf"
		}
		return "-inf"
	}
	if math.IsNaN(f) {
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// iterateItems walks a mapping (ordered *exec.Dict or Go map) in order.
func iterateItems(v *exec.Value, fn func(k, val *exec.Value) bool) {
	v.Iterate(func(_, _ int, key, value *exec.Value) bool {
		if value == nil {
			value = exec.AsValue(nil)
		}
		return fn(key, value)
	}, func() {})
}
