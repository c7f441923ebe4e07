package chat

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// markupEscape is markupsafe's escape: what Markup + str applies to the
// plain side.
var markupEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

// filterAdd is Python's + operator as Jinja evaluates it: numbers add,
// lists and strings concatenate, and a Markup string (a |safe result)
// plus a plain one escapes the plain side and stays Markup; its second and
// third arguments say which side is Markup (see isMarkup). Other operand
// types raise, as Python does (str + dict is a TypeError).
func filterAdd(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) != 3 {
		return errValue(errors.New("internal: + needs three arguments"))
	}
	right := va.Args[0]
	if right.IsError() {
		return right
	}
	switch {
	case in.IsString() && right.IsString():
		return addStrings(in.String(), right.String(), va.Args[1].IsTrue(), va.Args[2].IsTrue())
	case in.IsList() && right.IsList():
		out := make([]any, 0, in.Len()+right.Len())
		for _, s := range []*exec.Value{in, right} {
			for i := range s.Len() {
				out = append(out, s.Index(i).Interface())
			}
		}
		return exec.AsValue(out)
	case in.IsInteger() && right.IsInteger():
		return exec.AsValue(in.Integer() + right.Integer())
	case in.IsNumber() && right.IsNumber():
		return exec.AsValue(in.Float() + right.Float())
	}
	return errValue(fmt.Errorf("unsupported operand types for +: %s and %s", typeName(in), typeName(right)))
}

// addStrings concatenates; when one side is Markup, the other is escaped.
func addStrings(a, b string, markupA, markupB bool) *exec.Value {
	switch {
	case markupA && !markupB:
		return exec.AsSafeValue(a + markupEscape.Replace(b))
	case !markupA && markupB:
		return exec.AsSafeValue(markupEscape.Replace(a) + b)
	}
	return exec.AsValue(a + b)
}

// iterableLookup is the iterable test on a looked-up value: Jinja's
// Undefined is iterable (it iterates as empty); None is not.
func iterableLookup(v *exec.Value, found bool, _ *exec.VarArgs) *exec.Value {
	if !found {
		return exec.AsValue(true)
	}
	return exec.AsValue(v.IsList() || v.IsString() || v.IsDict())
}

// filterIterableName is "name is iterable": an undefined name is
// iterable, None is not.
func filterIterableName(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if len(va.Args) < 1 {
		return errValue(errors.New("internal: iterable needs a name"))
	}
	v, ok := e.Environment.Context.Get(va.Args[0].String())
	if !ok {
		return exec.AsValue(true)
	}
	return iterableLookup(exec.ToValue(v), true, va)
}

// filterDictSort is Jinja's dictsort(case_sensitive=False, by='key',
// reverse=False): a mapping's (key, value) pairs sorted, in order.
func filterDictSort(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	a, err := takeArgs("dictsort", va, "case_sensitive", "by", "reverse")
	if err != nil {
		return errValue(err)
	}
	if !in.IsDict() {
		return errValue(fmt.Errorf("dictsort: expected a mapping, got %s", typeName(in)))
	}
	caseSensitive := !isNone(a[0]) && a[0].IsTrue()
	by := 0
	if !isNone(a[1]) {
		switch a[1].String() {
		case "key":
		case "value":
			by = 1
		default:
			return errValue(errors.New("dictsort: by must be 'key' or 'value'"))
		}
	}
	items := dictItems(in)
	var sortErr error
	slices.SortStableFunc(items, func(x, y any) int {
		c, err := pyCompare(exec.AsValue(x.([]any)[by]), exec.AsValue(y.([]any)[by]), caseSensitive)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return c
	})
	if sortErr != nil {
		return errValue(fmt.Errorf("dictsort: %w", sortErr))
	}
	if !isNone(a[2]) && a[2].IsTrue() {
		slices.Reverse(items)
	}
	return exec.AsValue(items)
}

// pyCompare orders two values as Python's < does for what sort keys hold
// (strings, lowercased unless caseSensitive; numbers).
func pyCompare(x, y *exec.Value, caseSensitive bool) (int, error) {
	switch {
	case x.IsString() && y.IsString():
		a, b := x.String(), y.String()
		if !caseSensitive {
			a, b = strings.ToLower(a), strings.ToLower(b)
		}
		return strings.Compare(a, b), nil
	case x.IsNumber() && y.IsNumber():
		return cmp.Compare(x.Float(), y.Float()), nil
	}
	return 0, fmt.Errorf("'<' not supported between instances of %s and %s", typeName(x), typeName(y))
}

// errNoneIterable is Python's TypeError for iterating over None.
var errNoneIterable = errors.New("for loop: 'NoneType' object is not iterable")

// iterLookup is a for loop's sequence after a lookup: undefined iterates
// as empty, None raises.
func iterLookup(v *exec.Value, found bool, _ *exec.VarArgs) *exec.Value {
	switch {
	case !found:
		return exec.AsValue([]any{})
	case v.IsNil():
		return errValue(errNoneIterable)
	}
	return v
}

// filterIterName is iterLookup for a plain name.
func filterIterName(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) < 1 {
		return errValue(errors.New("internal: iteration needs a name"))
	}
	v, ok := e.Environment.Context.Get(va.Args[0].String())
	if !ok {
		return exec.AsValue([]any{})
	}
	return iterLookup(exec.ToValue(v), true, va)
}

// filterGeneratorJSON is tojson on a generator: Python's json.dumps raises.
func filterGeneratorJSON(*exec.Evaluator, *exec.Value, *exec.VarArgs) *exec.Value {
	return errValue(errors.New("tojson: Object of type generator is not JSON serializable (add | list before tojson)"))
}
