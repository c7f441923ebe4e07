package chat

import (
	"errors"
	"fmt"

	"github.com/helexa/helexa/internal/jinja/exec"
	"github.com/helexa/helexa/internal/jinja/nodes"
)

// The engine holds None and undefined as the same nil value, but Jinja2's string
// and length filters tell them apart: None|string is "None" while an
// undefined value gives "", and len(None) raises TypeError while an
// undefined value has length 0. Where the filtered value is a name, an
// attribute or an item, the rewriter hands these filters the lookup itself
// (see noneAwareFilter) so they can tell which it is.
const (
	fStringName = "__py_string_name"
	fStringAttr = "__py_string_attr"
	fStringItem = "__py_string_item"
	fLengthName = "__py_length_name"
	fLengthAttr = "__py_length_attr"
	fLengthItem = "__py_length_item"
)

// noneAwareFilters returns the filters the rewriter substitutes for string
// and length (count) applied to a lookup, and Python's length for the rest.
func noneAwareFilters() map[string]exec.FilterFunction {
	return map[string]exec.FilterFunction{
		"length":    filterLength,
		"count":     filterLength,
		fStringName: sized(nameFilter(stringLookup)),
		fStringAttr: printingLookup(attrLookup, stringLookup),
		fStringItem: printingLookup(itemLookup, stringLookup),
		fLengthName: nameFilter(lengthLookup),
		fLengthAttr: lookupFilter(attrLookup, lengthLookup),
		fLengthItem: lookupFilter(itemLookup, lengthLookup),
	}
}

// noneAwareLookups maps a filter to its name, attribute and item variants.
var noneAwareLookups = map[string][3]string{
	"string": {fStringName, fStringAttr, fStringItem},
	"length": {fLengthName, fLengthAttr, fLengthItem},
	"count":  {fLengthName, fLengthAttr, fLengthItem},
}

// noneAwareFilter rewrites x|string and x|length (count) where x is a name,
// an attribute or an item into the lookup-aware variants above.
func noneAwareFilter(f *nodes.FilteredExpression) {
	if len(f.Filters) == 0 {
		return
	}
	first := f.Filters[0]
	names, ok := noneAwareLookups[first.Name]
	if !ok || len(first.Args) > 0 || len(first.Kwargs) > 0 {
		return
	}
	tok := first.Token
	call := func(name string, arg nodes.Expression) *nodes.FilterCall {
		return &nodes.FilterCall{Token: tok, Name: name, Args: []nodes.Expression{arg}, Kwargs: map[string]nodes.Expression{}}
	}
	switch e := f.Expression.(type) {
	case *nodes.None: // the none literal: a None that is always defined
		f.Filters[0] = call(names[0], &nodes.Bool{Location: tok, Val: true})
		return
	case *nodes.Name:
		if e.Name != nil {
			f.Filters[0] = call(names[0], &nodes.String{Location: tok, Val: e.Name.Val})
		}
		return
	case *nodes.GetAttribute:
		if base, ok := e.Node.(nodes.Expression); ok && e.Attribute != "" {
			f.Expression = base
			f.Filters[0] = call(names[1], &nodes.String{Location: tok, Val: e.Attribute})
		}
		return
	}
	if c, k, ok := getItemParts(f.Expression); ok {
		f.Expression = c
		f.Filters[0] = call(names[2], k)
	}
}

// nameFilter applies then to the value of the variable named by the
// filter's argument (the filtered value is the variable's own value); a
// boolean argument says outright whether the value is defined.
func nameFilter(then func(*exec.Value, bool, *exec.VarArgs) *exec.Value) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		if len(va.Args) < 1 {
			return errValue(errors.New("internal: lookup needs a name"))
		}
		if arg := va.Args[0]; arg.IsBool() {
			return then(in, arg.Bool(), va)
		}
		return then(in, e.Environment.Context.Has(va.Args[0].String()), va)
	}
}

// stringLookup is Jinja's string filter on a looked-up value.
func stringLookup(v *exec.Value, found bool, _ *exec.VarArgs) *exec.Value {
	switch {
	case !found:
		return exec.AsValue("")
	case v == nil || v.IsNil():
		return exec.AsValue("None")
	}
	return exec.AsValue(text(v))
}

// lengthLookup is Jinja's length filter on a looked-up value.
func lengthLookup(v *exec.Value, found bool, _ *exec.VarArgs) *exec.Value {
	switch {
	case !found:
		return exec.AsValue(0)
	case v == nil || v.IsNil():
		return errValue(errors.New("TypeError: object of type 'NoneType' has no len()"))
	}
	return pyLen(v)
}

// filterLength is Jinja's length (count): Python's len(), which counts code
// points, items or keys and raises on numbers and booleans. A nil value
// reached here may be undefined, whose length is 0.
func filterLength(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) > 0 || len(va.KwArgs) > 0 {
		return errValue(errors.New("length() takes no arguments"))
	}
	if in.IsNil() {
		return exec.AsValue(0)
	}
	return pyLen(in)
}

func pyLen(v *exec.Value) *exec.Value {
	if v.IsString() || v.IsList() || v.IsDict() {
		return exec.AsValue(v.Len())
	}
	return errValue(fmt.Errorf("TypeError: object of type '%s' has no len()", typeName(v)))
}
