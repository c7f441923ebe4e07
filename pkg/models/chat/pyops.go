package chat

import (
	"errors"
	"fmt"
	"github.com/helexa/helexa/internal/jinja/errs"
	"math"
	"strconv"
	"strings"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// pyMod is Python's % operator: printf-style formatting when the left side
// is a string, floored modulo for numbers.
func pyMod(left, right *exec.Value) (any, error) {
	if left.IsString() {
		return pyPercentFormat(left.String(), right)
	}
	if !left.IsNumber() || !right.IsNumber() {
		return nil, fmt.Errorf("unsupported operand types for %%: %s and %s", typeName(left), typeName(right))
	}
	if left.IsInteger() && right.IsInteger() {
		a, b := left.Integer(), right.Integer()
		if b == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		m := a % b
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return m, nil
	}
	a, b := left.Float(), right.Float()
	if b == 0 {
		return nil, errors.New("float modulo")
	}
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m, nil
}

// maxRepeat bounds the length of a string or list built by *, so a
// template cannot exhaust memory.
const maxRepeat = 1 << 24

// pyMul is Python's * operator: numbers, and str or list times int (a
// count below one gives an empty result).
func pyMul(left, right *exec.Value) (any, error) {
	if left.IsNumber() && right.IsNumber() {
		if left.IsInteger() && right.IsInteger() {
			return left.Integer() * right.Integer(), nil
		}
		return left.Float() * right.Float(), nil
	}
	seq, n := left, right
	if left.IsInteger() {
		seq, n = right, left
	}
	if !n.IsInteger() || !(seq.IsString() || seq.IsList()) {
		return nil, fmt.Errorf("unsupported operand types for *: %s and %s", typeName(left), typeName(right))
	}
	count := max(n.Integer(), 0)
	if count > 0 && seq.Len() > maxRepeat/count {
		return nil, fmt.Errorf("%s * %d is too large", typeName(seq), count)
	}
	if seq.IsString() {
		return strings.Repeat(seq.String(), count), nil
	}
	out := make([]any, 0, seq.Len()*count)
	for range count {
		for i := range seq.Len() {
			out = append(out, seq.Index(i).Interface())
		}
	}
	return out, nil
}

// pyPow is Python's ** operator: int ** non-negative int stays an int.
func pyPow(left, right *exec.Value) (any, error) {
	if !left.IsNumber() || !right.IsNumber() {
		return nil, fmt.Errorf("unsupported operand types for **: %s and %s", typeName(left), typeName(right))
	}
	if left.IsInteger() && right.IsInteger() && right.Integer() >= 0 {
		base, exp, out := left.Integer(), right.Integer(), 1
		for ; exp > 0; exp-- {
			out *= base
		}
		return out, nil
	}
	return math.Pow(left.Float(), right.Float()), nil
}

// pyFloorDiv is Python's // operator (floor, int for two ints).
func pyFloorDiv(left, right *exec.Value) (any, error) {
	if !left.IsNumber() || !right.IsNumber() {
		return nil, fmt.Errorf("unsupported operand types for //: %s and %s", typeName(left), typeName(right))
	}
	if left.IsInteger() && right.IsInteger() {
		a, b := left.Integer(), right.Integer()
		if b == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, nil
	}
	if right.Float() == 0 {
		return nil, errors.New("float floor division by zero")
	}
	return math.Floor(left.Float() / right.Float()), nil
}

func typeName(v *exec.Value) string {
	switch {
	case v.IsNil():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInteger():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsDict():
		return "dict"
	case v.IsList():
		return "list"
	}
	return fmt.Sprintf("%T", v.Interface())
}

// pyPercentFormat implements 'fmt' % args for the conversions s r d i f F
// e E g G x X o c and %%, with flags, width and precision; args is one value,
// a tuple of values, or a mapping for %(name)s.
func pyPercentFormat(format string, args *exec.Value) (string, error) {
	var list []*exec.Value
	mapping := args.IsDict()
	if tuple, ok := args.Interface().(exec.ValuesList); ok { // a tuple literal (list literals are []any)
		list = tuple
	} else if !mapping {
		list = []*exec.Value{args}
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		spec, n, err := parsePercentSpec(format[i+1:])
		if err != nil {
			return "", err
		}
		i += n
		if spec.conv == '%' {
			b.WriteByte('%')
			continue
		}
		var arg *exec.Value
		if spec.key != "" {
			if !mapping {
				return "", errors.New("format requires a mapping")
			}
			v, ok := lookupKey(args, exec.AsValue(spec.key))
			if !ok {
				return "", fmt.Errorf("KeyError: '%s'", spec.key)
			}
			arg = v
		} else {
			if mapping {
				arg = args
			} else {
				if next >= len(list) {
					return "", errors.New("not enough arguments for format string")
				}
				arg = list[next]
				next++
			}
		}
		s, err := spec.format(arg)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	if !mapping && next < len(list) {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

type percentSpec struct {
	key   string
	flags string
	width int
	prec  int // -1: none
	conv  byte
}

func parsePercentSpec(s string) (percentSpec, int, error) {
	sp := percentSpec{prec: -1}
	i := 0
	if i < len(s) && s[i] == '(' {
		end := strings.IndexByte(s[i:], ')')
		if end < 0 {
			return sp, 0, errors.New("incomplete format key")
		}
		sp.key = s[i+1 : i+end]
		i += end + 1
	}
	for i < len(s) && strings.IndexByte("-+ #0", s[i]) >= 0 {
		sp.flags += string(s[i])
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	sp.width, _ = strconv.Atoi(s[start:i])
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		sp.prec, _ = strconv.Atoi(s[start:i])
	}
	if i >= len(s) {
		return sp, 0, errors.New("incomplete format")
	}
	if err := errs.CheckWidth(max(sp.width, sp.prec)); err != nil {
		return sp, 0, err
	}
	sp.conv = s[i]
	if strings.IndexByte("srdifFeEgGxXoc%", sp.conv) < 0 {
		return sp, 0, fmt.Errorf("unsupported format character '%c'", sp.conv)
	}
	return sp, i + 1, nil
}

func (sp percentSpec) format(v *exec.Value) (string, error) {
	var body string
	switch sp.conv {
	case 's':
		body = pyStr(v)
		if sp.prec >= 0 && len([]rune(body)) > sp.prec {
			body = string([]rune(body)[:sp.prec])
		}
	case 'r':
		body = pyRepr(v)
	case 'c':
		if v.IsInteger() {
			body = string(rune(v.Integer()))
		} else {
			body = v.String()
		}
	default:
		if !v.IsNumber() && !v.IsBool() {
			return "", fmt.Errorf("%%%c format: a real number is required, not %s", sp.conv, typeName(v))
		}
		body = sp.formatNumber(v)
	}
	return sp.pad(body), nil
}

func (sp percentSpec) formatNumber(v *exec.Value) string {
	goFlags := strings.ReplaceAll(sp.flags, "-", "")
	goFlags = strings.ReplaceAll(goFlags, "0", "")
	verb := string(sp.conv)
	prec := ""
	if sp.prec >= 0 {
		prec = "." + strconv.Itoa(sp.prec)
	}
	switch sp.conv {
	case 'd', 'i':
		n := v.Integer()
		if v.IsFloat() {
			n = int(math.Trunc(v.Float()))
		}
		return fmt.Sprintf("%"+goFlags+"d", n)
	case 'x', 'X', 'o':
		return fmt.Sprintf("%"+goFlags+verb, v.Integer())
	case 'f', 'F', 'e', 'E', 'g', 'G':
		if sp.prec < 0 {
			prec = ".6"
		}
		return fmt.Sprintf("%"+goFlags+prec+verb, v.Float())
	}
	return v.String()
}

func (sp percentSpec) pad(s string) string {
	n := len([]rune(s))
	if n >= sp.width {
		return s
	}
	fill := strings.Repeat(" ", sp.width-n)
	switch {
	case strings.Contains(sp.flags, "-"):
		return s + fill
	case strings.Contains(sp.flags, "0") && strings.IndexByte("src", sp.conv) < 0:
		zeros := strings.Repeat("0", sp.width-n)
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") || strings.HasPrefix(s, " ") {
			return s[:1] + zeros + s[1:]
		}
		return zeros + s
	}
	return fill + s
}

// pyStr is Python's str() of a template value.
func pyStr(v *exec.Value) string {
	switch {
	case v == nil || v.IsNil():
		return "None"
	case v.IsString():
		return v.String()
	case v.IsFloat():
		return pyFloatRepr(v.Float())
	case v.IsList(), v.IsDict():
		return pyRepr(v)
	}
	return v.String()
}

// pyRepr is Python's repr() of a template value.
func pyRepr(v *exec.Value) string {
	switch {
	case v == nil || v.IsNil():
		return "None"
	case v.IsString():
		return pyQuote(v.String())
	case v.IsFloat():
		return pyFloatRepr(v.Float())
	case v.IsList():
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = pyRepr(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case v.IsDict():
		var parts []string
		iterateItems(v, func(k, val *exec.Value) bool {
			parts = append(parts, pyRepr(k)+": "+pyRepr(val))
			return true
		})
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.String()
}

// pyQuote quotes s like Python's repr(str).
func pyQuote(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
