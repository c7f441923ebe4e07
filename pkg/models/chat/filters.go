package chat

import (
	"errors"
	"fmt"
	"github.com/helexa/helexa/internal/jinja/errs"
	"strings"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// filters returns the filters added to or replaced in the engine's set.
func filters() map[string]exec.FilterFunction {
	return map[string]exec.FilterFunction{
		"tojson":       sized(filterToJSON),
		"items":        filterItems,
		fMod:           sized(binaryFilter(pyMod)),
		fPow:           binaryFilter(pyPow),
		fFloorDiv:      binaryFilter(pyFloorDiv),
		fConcat:        sized(bounded(binaryFilter(pyConcat))),
		fMul:           bounded(binaryFilter(pyMul)),
		"string":       sized(filterString),
		"trim":         filterTrim,
		"reverse":      filterReverse,
		"round":        filterRound,
		fGetItem:       filterGetItem,
		fList:          filterList,
		fPrintName:     sized(filterPrintName),
		fPrintAttr:     printingLookup(attrLookup, printLookup),
		fPrintItem:     printingLookup(itemLookup, printLookup),
		fPrintNone:     sized(filterPrintNone),
		fPrintValue:    sized(filterPrintValue),
		fDefinedName:   filterDefinedName,
		fDefinedAttr:   lookupFilter(attrLookup, definedLookup),
		fDefinedItem:   lookupFilter(itemLookup, definedLookup),
		fAdd:           bounded(filterAdd),
		fIterableName:  filterIterableName,
		fIterableAttr:  lookupFilter(attrLookup, iterableLookup),
		fIterableItem:  lookupFilter(itemLookup, iterableLookup),
		"dictsort":     filterDictSort,
		fIterName:      filterIterName,
		fGeneratorJSON: filterGeneratorJSON,
		fIterAttr:      lookupFilter(attrLookup, iterLookup),
		fIterItem:      lookupFilter(itemLookup, iterLookup),
	}
}

func errValue(err error) *exec.Value { return exec.AsValue(err) }

// filterToJSON is Hugging Face's tojson:
// json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
func filterToJSON(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	a, err := takeArgs("tojson", va, "ensure_ascii", "indent", "separators", "sort_keys")
	if err != nil {
		return errValue(err)
	}
	opt := defaultJSONOptions()
	opt.ensureASCII = !isNone(a[0]) && a[0].IsTrue()
	if !isNone(a[1]) {
		opt.hasIndent = true
		opt.itemSep = ","
		switch {
		case a[1].IsString():
			opt.indent = a[1].String()
		case a[1].IsInteger():
			if err := errs.CheckWidth(a[1].Integer()); err != nil {
				return errValue(fmt.Errorf("tojson: indent: %w", err))
			}
			opt.indent = strings.Repeat(" ", max(0, a[1].Integer()))
		default:
			return errValue(fmt.Errorf("tojson: indent must be an int or a string, not %s", typeName(a[1])))
		}
	}
	if !isNone(a[2]) {
		if !a[2].IsList() || a[2].Len() != 2 {
			return errValue(errors.New("tojson: separators must be a (item_separator, key_separator) pair"))
		}
		opt.itemSep, opt.keySep = a[2].Index(0).String(), a[2].Index(1).String()
	}
	opt.sortKeys = !isNone(a[3]) && a[3].IsTrue()
	s, err := pyJSON(in, opt)
	if err != nil {
		return errValue(err)
	}
	return exec.AsValue(s) // json.dumps returns a plain str, not Markup
}

// filterItems is Jinja's items filter, keeping the mapping's order.
func filterItems(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if err := noArguments("items", va); err != nil {
		return errValue(err)
	}
	if in.IsNil() {
		return exec.AsValue([]any{})
	}
	if !in.IsDict() {
		return errValue(fmt.Errorf("items: expected a mapping, got %s", typeName(in)))
	}
	return exec.AsValue(dictItems(in))
}

// bounded makes an operator that can grow strings and lists fail once its
// result is larger than the render's budget allows (output bytes for
// strings, loop iterations for lists), so a template that doubles a value
// in a loop runs out of budget rather than memory.
func bounded(f exec.FilterFunction) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		out := f(e, in, va)
		if e == nil || out.IsError() {
			return out
		}
		var err error
		switch {
		case out.IsString():
			err = e.Budget.CheckSize(len(out.String()))
		case out.IsList():
			err = e.Budget.CheckLength(out.Len())
		}
		if err != nil {
			return errValue(err)
		}
		return out
	}
}

// sized makes a filter that prints its input or arguments refuse, before
// building any text, containers whose text would be larger than the
// render's output budget (see exec.Budget.CheckValue).
func sized(f exec.FilterFunction) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if e != nil {
			if err := e.Budget.CheckValue(in); err != nil {
				return errValue(err)
			}
			for _, a := range va.Args {
				if err := e.Budget.CheckValue(a); err != nil {
					return errValue(err)
				}
			}
		}
		return f(e, in, va)
	}
}

func binaryFilter(op func(a, b *exec.Value) (any, error)) exec.FilterFunction {
	return func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		if len(va.Args) != 1 {
			return errValue(errors.New("internal: operator filter needs one argument"))
		}
		out, err := op(in, va.Args[0])
		if err != nil {
			return errValue(err)
		}
		return exec.AsValue(out)
	}
}

// getItem is Jinja's subscript: mappings by key, sequences by (negative)
// index; a missing key or index is undefined (nil, false).
func getItem(container, key *exec.Value) (*exec.Value, bool) {
	switch {
	case container.IsNil() || key.IsError():
		return exec.AsValue(nil), false
	case container.IsDict():
		if v, ok := lookupKey(container, key); ok {
			return v, true
		}
		if key.IsString() { // Go maps with non-string-typed access, namespaces
			return container.GetItem(key.String())
		}
		return exec.AsValue(nil), false
	case (container.IsList() || container.IsString()) && (key.IsInteger() || key.IsBool()):
		n, i := container.Len(), key.Integer()
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return exec.AsValue(nil), false
		}
		return container.Index(i), true
	case key.IsString():
		if v, ok := container.GetItem(key.String()); ok {
			return v, true
		}
		return container.GetAttribute(key.String())
	}
	return exec.AsValue(nil), false
}

// filterList turns a tuple's values into a list ([]any).
func filterList(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	vl, ok := in.Interface().(exec.ValuesList)
	if !ok {
		return in
	}
	out := make([]any, len(vl))
	for i, v := range vl {
		out[i] = v.Interface()
	}
	return exec.AsValue(out)
}

func filterGetItem(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) != 1 {
		return errValue(errors.New("internal: getitem needs one argument"))
	}
	v, _ := getItem(in, va.Args[0])
	return v
}

// attrLookup is Jinja's getattr: attribute first, then item.
func attrLookup(container, name *exec.Value) (*exec.Value, bool) {
	if container.IsNil() || container.IsError() {
		return exec.AsValue(nil), false
	}
	if container.IsDict() {
		if v, ok := lookupKey(container, name); ok {
			return v, true
		}
	}
	v, ok := container.GetAttribute(name.String())
	if !ok {
		v, ok = container.GetItem(name.String())
	}
	if ok && v.IsNil() && !container.IsDict() {
		ok = false // an object's nil attribute (loop.previtem on the first item) is undefined
	}
	return v, ok
}

func itemLookup(container, key *exec.Value) (*exec.Value, bool) { return getItem(container, key) }

// printLookup renders a looked-up value for {{ }}: None prints "None",
// undefined prints "".
func printLookup(v *exec.Value, found bool, _ *exec.VarArgs) *exec.Value {
	if !found {
		return exec.AsValue("")
	}
	if v == nil || v.IsNil() {
		return exec.AsValue("None")
	}
	return display(v)
}

// display is how {{ v }} shows a value: containers as Python's str() does
// (the engine prints None inside them as nothing), everything else as the engine does.
func display(v *exec.Value) *exec.Value {
	if v.IsError() || !(v.IsList() || v.IsDict()) {
		return v
	}
	return exec.AsValue(pyRepr(v))
}

// text is how ~ and the string filter turn a value into text: containers
// as Python's str(), everything else (None and undefined alike) as the engine.
func text(v *exec.Value) string {
	if v.IsList() || v.IsDict() {
		return pyRepr(v)
	}
	return v.String()
}

// pyConcat is Jinja's a ~ b.
func pyConcat(a, b *exec.Value) (any, error) {
	if b.IsError() {
		return nil, errors.New(b.String())
	}
	return text(a) + text(b), nil
}

// filterString is Jinja's string filter.
func filterString(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) > 0 || len(va.KwArgs) > 0 {
		return errValue(errors.New("string() takes no arguments"))
	}
	return exec.AsValue(text(in))
}

// filterTrim is Jinja's trim(chars=None): like Python, any value is first
// turned into text (a list of content parts gives its str()).
func filterTrim(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	strip, err := stripArg("trim", va)
	if err != nil {
		return errValue(err)
	}
	return exec.AsValue(strings.TrimFunc(text(in), strip))
}

func filterPrintValue(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	return display(in)
}

// definedLookup is the defined/undefined test; its second argument negates.
func definedLookup(_ *exec.Value, found bool, va *exec.VarArgs) *exec.Value {
	negate := len(va.Args) > 1 && va.Args[1].IsTrue()
	return exec.AsValue(found != negate)
}

func lookupFilter(lookup func(c, k *exec.Value) (*exec.Value, bool), then func(*exec.Value, bool, *exec.VarArgs) *exec.Value) exec.FilterFunction {
	return lookupThen(lookup, then, false)
}

// printingLookup is lookupFilter for filters that print the looked-up
// value: a container too large to print within the budget is refused
// first (see sized).
func printingLookup(lookup func(c, k *exec.Value) (*exec.Value, bool), then func(*exec.Value, bool, *exec.VarArgs) *exec.Value) exec.FilterFunction {
	return lookupThen(lookup, then, true)
}

func lookupThen(lookup func(c, k *exec.Value) (*exec.Value, bool), then func(*exec.Value, bool, *exec.VarArgs) *exec.Value, prints bool) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		if len(va.Args) < 1 {
			return errValue(errors.New("internal: lookup needs a key"))
		}
		v, found := lookup(in, va.Args[0])
		if v != nil && v.IsError() {
			found = false
		}
		if prints && found && e != nil {
			if err := e.Budget.CheckValue(v); err != nil {
				return errValue(err)
			}
		}
		return then(v, found, va)
	}
}

func filterPrintName(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() || !in.IsNil() || len(va.Args) != 1 {
		return display(in)
	}
	if e.Environment.Context.Has(va.Args[0].String()) {
		return exec.AsValue("None")
	}
	return exec.AsValue("")
}

func filterPrintNone(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	if in.IsNil() && !in.IsError() {
		return exec.AsValue("None")
	}
	return display(in)
}

func filterDefinedName(e *exec.Evaluator, _ *exec.Value, va *exec.VarArgs) *exec.Value {
	if len(va.Args) != 2 {
		return errValue(errors.New("internal: defined needs two arguments"))
	}
	return exec.AsValue(e.Environment.Context.Has(va.Args[0].String()) != va.Args[1].IsTrue())
}

// tests returns the tests replaced in the engine's set.
func tests() map[string]exec.TestFunction {
	return map[string]exec.TestFunction{
		// the engine's true/false test "not value.Bool()", so None is false.
		"false": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return in.IsBool() && !in.Bool(), nil
		},
		"true": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return in.IsBool() && in.Bool(), nil
		},
		"sequence": func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) (bool, error) {
			return in.IsList() || in.IsString() || in.IsDict(), nil
		},
	}
}
