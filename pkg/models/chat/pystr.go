package chat

import (
	"errors"
	"fmt"
	"github.com/helexa/helexa/internal/jinja/errs"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// takeArgs binds positional-or-keyword arguments by name, Python style.
// Missing arguments are nil; too many or unknown ones are an error.
func takeArgs(method string, va *exec.VarArgs, names ...string) ([]*exec.Value, error) {
	if len(va.Args) > len(names) {
		return nil, fmt.Errorf("%s() takes at most %d arguments (%d given)", method, len(names), len(va.Args))
	}
	out := make([]*exec.Value, len(names))
	copy(out, va.Args)
	for k, v := range va.KwArgs {
		i := indexOf(names, k)
		if i < 0 {
			return nil, fmt.Errorf("%s() got an unexpected keyword argument '%s'", method, k)
		}
		if out[i] != nil {
			return nil, fmt.Errorf("%s() got multiple values for argument '%s'", method, k)
		}
		out[i] = v
	}
	return out, nil
}

func indexOf(names []string, k string) int {
	for i, n := range names {
		if n == k {
			return i
		}
	}
	return -1
}

func isNone(v *exec.Value) bool { return v == nil || v.IsNil() }

// isPySpace reports Python's str.isspace for one rune.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// stripArg resolves the optional chars argument of strip/lstrip/rstrip.
func stripArg(method string, va *exec.VarArgs) (func(rune) bool, error) {
	a, err := takeArgs(method, va, "chars")
	if err != nil {
		return nil, err
	}
	if isNone(a[0]) {
		return isPySpace, nil
	}
	if !a[0].IsString() {
		return nil, fmt.Errorf("%s arg must be None or str", method)
	}
	chars := a[0].String()
	return func(r rune) bool { return strings.ContainsRune(chars, r) }, nil
}

type strMethod = exec.Method[string]

// pyStrMethods are Python str methods with CPython semantics, replacing
// the engine's versions where those differ (defaults, two-argument replace, ...).
func pyStrMethods() map[string]strMethod {
	return map[string]strMethod{
		"strip": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			f, err := stripArg("strip", va)
			if err != nil {
				return nil, err
			}
			return strings.TrimFunc(s, f), nil
		},
		"lstrip": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			f, err := stripArg("lstrip", va)
			if err != nil {
				return nil, err
			}
			return strings.TrimLeftFunc(s, f), nil
		},
		"rstrip": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			f, err := stripArg("rstrip", va)
			if err != nil {
				return nil, err
			}
			return strings.TrimRightFunc(s, f), nil
		},
		"split":      func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) { return pySplit("split", s, va, false) },
		"rsplit":     func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) { return pySplit("rsplit", s, va, true) },
		"replace":    pyReplace,
		"startswith": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) { return pyAffix("startswith", s, va) },
		"endswith":   func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) { return pyAffix("endswith", s, va) },
		"upper":      noArgs("upper", strings.ToUpper),
		"lower":      noArgs("lower", strings.ToLower),
		"title":      noArgs("title", pyTitle),
		"capitalize": noArgs("capitalize", pyCapitalize),
		"find":       pyFind,
		"count": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			a, err := takeArgs("count", va, "sub")
			if err != nil {
				return nil, err
			}
			if isNone(a[0]) || !a[0].IsString() {
				return nil, errors.New("count() requires a string argument")
			}
			sub := a[0].String()
			if sub == "" {
				return len([]rune(s)) + 1, nil
			}
			return strings.Count(s, sub), nil
		},
		"join": func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			a, err := takeArgs("join", va, "iterable")
			if err != nil {
				return nil, err
			}
			if isNone(a[0]) {
				return nil, errors.New("join() requires an iterable")
			}
			var parts []string
			size := 0
			var tooBig error
			a[0].Iterate(func(_, _ int, k, _ *exec.Value) bool {
				size += exec.TextSize(k, errs.MaxStringBytes) + len(s)
				if tooBig = errs.CheckStringSize(size); tooBig != nil {
					return false
				}
				parts = append(parts, k.String())
				return true
			}, func() {})
			if tooBig != nil {
				return nil, fmt.Errorf("join(): %w", tooBig)
			}
			return strings.Join(parts, s), nil
		},
	}
}

func noArgs(name string, fn func(string) string) strMethod {
	return func(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
		if len(va.Args)+len(va.KwArgs) > 0 {
			return nil, fmt.Errorf("%s() takes no arguments", name)
		}
		return fn(s), nil
	}
}

func pySplit(method, s string, va *exec.VarArgs, fromRight bool) (any, error) {
	a, err := takeArgs(method, va, "sep", "maxsplit")
	if err != nil {
		return nil, err
	}
	maxsplit := -1
	if !isNone(a[1]) {
		maxsplit = a[1].Integer()
	}
	var parts []string
	if err := errs.CheckItems(splitCount(s, a[0], maxsplit)); err != nil {
		return nil, fmt.Errorf("%s(): %w", method, err)
	}
	if isNone(a[0]) {
		parts = splitWhitespace(s, maxsplit, fromRight)
	} else {
		sep := a[0].String()
		if sep == "" {
			return nil, errors.New("empty separator")
		}
		switch {
		case maxsplit < 0:
			parts = strings.Split(s, sep)
		case fromRight:
			parts = rsplitN(s, sep, maxsplit)
		default:
			parts = strings.SplitN(s, sep, maxsplit+1)
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func rsplitN(s, sep string, maxsplit int) []string {
	var rev []string
	for range maxsplit {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		rev = append(rev, s[i+len(sep):])
		s = s[:i]
	}
	out := []string{s}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// splitWhitespace is str.split() without a separator: runs of whitespace
// separate, leading/trailing whitespace is ignored.
func splitWhitespace(s string, maxsplit int, fromRight bool) []string {
	fields := strings.FieldsFunc(s, isPySpace)
	if maxsplit < 0 || len(fields) <= maxsplit+1 {
		return fields
	}
	if fromRight {
		// Keep the head unsplit: cut after the (len-maxsplit)th field.
		rest := s
		var tail []string
		for range maxsplit {
			rest = strings.TrimRightFunc(rest, isPySpace)
			i := strings.LastIndexFunc(rest, isPySpace)
			tail = append([]string{rest[i+1:]}, tail...)
			rest = rest[:i+1]
		}
		return append([]string{strings.TrimRightFunc(rest, isPySpace)}, tail...)
	}
	rest := s
	var head []string
	for range maxsplit {
		rest = strings.TrimLeftFunc(rest, isPySpace)
		i := strings.IndexFunc(rest, isPySpace)
		head = append(head, rest[:i])
		rest = rest[i:]
	}
	return append(head, strings.TrimLeftFunc(rest, isPySpace))
}

func pyReplace(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
	a, err := takeArgs("replace", va, "old", "new", "count")
	if err != nil {
		return nil, err
	}
	if isNone(a[0]) || isNone(a[1]) || !a[0].IsString() || !a[1].IsString() {
		return nil, errors.New("replace() requires two string arguments")
	}
	n := -1
	if !isNone(a[2]) {
		n = a[2].Integer()
	}
	old, repl := a[0].String(), a[1].String()
	if err := errs.CheckStringSize(replacedSize(s, old, repl, n)); err != nil {
		return nil, fmt.Errorf("replace(): %w", err)
	}
	return strings.Replace(s, old, repl, n), nil
}

// pyAffix implements startswith/endswith with a str or tuple of str and
// optional start/end (rune indices, Python slice semantics).
func pyAffix(method, s string, va *exec.VarArgs) (any, error) {
	a, err := takeArgs(method, va, "prefix", "start", "end")
	if err != nil {
		return nil, err
	}
	if isNone(a[0]) {
		return nil, fmt.Errorf("%s first arg must be str or a tuple of str", method)
	}
	s = sliceRunes(s, a[1], a[2])
	var cands []string
	if a[0].IsString() {
		cands = []string{a[0].String()}
	} else if a[0].IsList() {
		for i := range a[0].Len() {
			cands = append(cands, a[0].Index(i).String())
		}
	} else {
		return nil, fmt.Errorf("%s first arg must be str or a tuple of str", method)
	}
	for _, c := range cands {
		if (method == "startswith" && strings.HasPrefix(s, c)) || (method == "endswith" && strings.HasSuffix(s, c)) {
			return true, nil
		}
	}
	return false, nil
}

func sliceRunes(s string, start, end *exec.Value) string {
	if isNone(start) && isNone(end) {
		return s
	}
	r := []rune(s)
	n := len(r)
	clamp := func(v *exec.Value, def int) int {
		if isNone(v) {
			return def
		}
		i := v.Integer()
		if i < 0 {
			i += n
		}
		return max(0, min(i, n))
	}
	i, j := clamp(start, 0), clamp(end, n)
	if i >= j {
		return ""
	}
	return string(r[i:j])
}

func pyFind(s string, _ *exec.Value, va *exec.VarArgs) (any, error) {
	a, err := takeArgs("find", va, "sub", "start", "end")
	if err != nil {
		return nil, err
	}
	if isNone(a[0]) || !a[0].IsString() {
		return nil, errors.New("find() requires a string argument")
	}
	offset := 0
	if !isNone(a[1]) {
		offset = a[1].Integer()
		if offset < 0 {
			offset += len([]rune(s))
		}
		offset = max(0, offset)
	}
	sub := sliceRunes(s, a[1], a[2])
	i := strings.Index(sub, a[0].String())
	if i < 0 {
		return -1, nil
	}
	return offset + len([]rune(sub[:i])), nil
}

func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prevCased = unicode.IsLetter(r)
	}
	return b.String()
}

func pyCapitalize(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	return string(unicode.ToTitle(r[0])) + strings.ToLower(string(r[1:]))
}

// replacedSize is len(strings.Replace(s, old, repl, n)), computed without
// building it (saturating at -1 on overflow).
func replacedSize(s, old, repl string, n int) int {
	var k int
	if old == "" {
		k = utf8.RuneCountInString(s) + 1
	} else {
		k = strings.Count(s, old)
	}
	if n >= 0 && n < k {
		k = n
	}
	grow := len(repl) - len(old)
	if grow > 0 && k > (math.MaxInt-len(s))/grow {
		return -1
	}
	return len(s) + k*grow
}

// splitCount bounds how many parts split(sep, maxsplit) gives.
func splitCount(s string, sep *exec.Value, maxsplit int) int {
	var k int
	if isNone(sep) {
		k = countFields(s)
	} else if sep.String() != "" {
		k = strings.Count(s, sep.String()) + 1
	}
	if maxsplit >= 0 && maxsplit+1 < k {
		k = maxsplit + 1
	}
	return k
}

// countFields is len(strings.Fields(s)) without building the fields.
func countFields(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
