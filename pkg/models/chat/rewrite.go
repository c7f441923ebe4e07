package chat

import (
	controlstructures "github.com/helexa/helexa/internal/jinja/builtins/control_structures"
	"github.com/helexa/helexa/internal/jinja/nodes"
	"github.com/helexa/helexa/internal/jinja/tokens"
)

// Names of the internal filters the rewriter calls. They start with "__"
// so no template can collide with them by accident.
const (
	fMod           = "__py_mod"
	fPow           = "__py_pow"
	fFloorDiv      = "__py_floordiv"
	fConcat        = "__py_concat"
	fMul           = "__py_mul"
	fGetItem       = "__py_getitem"
	fList          = "__py_list"
	fPrintName     = "__py_print_name"
	fPrintAttr     = "__py_print_attr"
	fPrintItem     = "__py_print_item"
	fPrintNone     = "__py_print_none"
	fPrintValue    = "__py_print_value"
	fDefinedName   = "__py_defined_name"
	fDefinedAttr   = "__py_defined_attr"
	fDefinedItem   = "__py_defined_item"
	fAdd           = "__py_add"
	fIterableName  = "__py_iterable_name"
	fIterableAttr  = "__py_iterable_attr"
	fIterableItem  = "__py_iterable_item"
	fIterName      = "__py_iter_name"
	fIterAttr      = "__py_iter_attr"
	fIterItem      = "__py_iter_item"
	fGeneratorJSON = "__py_generator_tojson"
)

// rewriteTemplate patches a parsed tree where the evaluator differs from
// Jinja2, by replacing expression nodes with calls to our own filters:
//   - a % b, a ** b, a // b, a * b   -> Python operator semantics ('%s' % x formatting)
//   - a ~ b                          -> containers as Python's str() (None inside prints None)
//   - x[k]                           -> Python indexing (negative indices, ordered dicts)
//   - a + b                          -> Python operand types; Markup + str escapes the str
//   - x is defined / undefined       -> a key present with a null value is defined
//   - x is iterable                  -> an undefined x is iterable, None is not
//   - gen | tojson                   -> TypeError: map/select/reject(attr) give generators
//   - for x in None                  -> TypeError (an undefined sequence still loops zero times)
//   - {{ x }} where x is None        -> prints "None" (undefined still prints "")
//   - x | string, x | length         -> None gives "None" / TypeError (undefined: "" / 0)
//   - [a, b]                         -> a Go slice, telling lists from tuples
//
// The walk is nodes.Transform: bottom-up, each node after its children.
func rewriteTemplate(root *nodes.Template) {
	nodes.Transform(root, replace)
}

// replace returns the node that stands for n (n itself when unchanged).
func replace(n nodes.Node) nodes.Node {
	var r nodes.Node = n
	switch t := n.(type) {
	case *nodes.BinaryExpression:
		r = rewriteBinary(t)
	case *nodes.GetItem:
		r = rewriteGetItem(t)
	case *nodes.TestExpression:
		r = rewriteDefined(t)
	case *nodes.FilteredExpression:
		markGeneratorJSON(t)
		noneAwareFilter(t)
	case *controlstructures.ForControlStructure:
		t.ObjectEvaluator = iterated(t.ObjectEvaluator)
	case *nodes.List:
		// the engine evaluates [..] and (..) alike; make list literals Go
		// slices so '%s' % [..] formats one value, as Python does.
		r = filtered(&nodes.Tuple{Location: t.Location, Val: t.Val}, t.Location, fList)
	case *nodes.Output:
		t.Expression = printable(t.Expression)
		if t.Alternative != nil {
			t.Alternative = printable(t.Alternative)
		}
	}
	return r
}

func filtered(in nodes.Expression, tok *tokens.Token, name string, args ...nodes.Expression) *nodes.FilteredExpression {
	return &nodes.FilteredExpression{
		Expression: in,
		Filters:    []*nodes.FilterCall{{Token: tok, Name: name, Args: args, Kwargs: map[string]nodes.Expression{}}},
	}
}

func rewriteBinary(b *nodes.BinaryExpression) nodes.Node {
	if b.Operator == nil || b.Operator.Token == nil {
		return b
	}
	var name string
	switch b.Operator.Token.Type {
	case tokens.Modulo:
		name = fMod
	case tokens.Power:
		name = fPow
	case tokens.FloorDivision:
		name = fFloorDiv
	case tokens.Tilde:
		name = fConcat
	case tokens.Addition:
		name = fAdd
	case tokens.Multiply:
		name = fMul
	default:
		return b
	}
	if name == fAdd {
		tok := b.Operator.Token
		return filtered(b.Left, tok, fAdd, b.Right,
			&nodes.Bool{Location: tok, Val: isMarkup(b.Left)}, &nodes.Bool{Location: tok, Val: isMarkup(b.Right)})
	}
	return filtered(b.Left, b.Operator.Token, name, b.Right)
}

// isMarkup reports whether e is statically a Markup string in Jinja: a
// |safe or |escape result, or a + with a Markup side (the engine's own Safe
// flag also marks joins and macro results, which Jinja leaves plain when
// autoescape is off).
func isMarkup(e nodes.Expression) bool {
	switch t := e.(type) {
	case *nodes.FilteredExpression:
		if len(t.Filters) == 0 {
			return false
		}
		last := t.Filters[len(t.Filters)-1]
		switch last.Name {
		case "safe", "escape", "e", "forceescape":
			return true
		case fAdd:
			return len(last.Args) == 3 && (isTrueLiteral(last.Args[1]) || isTrueLiteral(last.Args[2]))
		}
	case *nodes.BinaryExpression:
		if t.Operator != nil && t.Operator.Token != nil && t.Operator.Token.Type == tokens.Addition {
			return isMarkup(t.Left) || isMarkup(t.Right)
		}
	}
	return false
}

func isTrueLiteral(e nodes.Expression) bool {
	b, ok := e.(*nodes.Bool)
	return ok && b.Val
}

func rewriteGetItem(g *nodes.GetItem) nodes.Node {
	node, ok1 := g.Node.(nodes.Expression)
	arg, ok2 := g.Arg.(nodes.Expression)
	if !ok1 || !ok2 || g.Arg == nil {
		return g
	}
	return filtered(node, g.Location, fGetItem, arg)
}

// getItemParts recognises a rewritten x[k].
func getItemParts(e nodes.Expression) (container, key nodes.Expression, ok bool) {
	f, isF := e.(*nodes.FilteredExpression)
	if !isF || len(f.Filters) != 1 || f.Filters[0].Name != fGetItem || len(f.Filters[0].Args) != 1 {
		return nil, nil, false
	}
	return f.Expression, f.Filters[0].Args[0], true
}

func rewriteDefined(t *nodes.TestExpression) nodes.Node {
	if t.Test == nil || len(t.Test.Args) > 0 {
		return t
	}
	names := [3]string{fDefinedName, fDefinedAttr, fDefinedItem}
	switch t.Test.Name {
	case "defined", "undefined":
	case "iterable":
		names = [3]string{fIterableName, fIterableAttr, fIterableItem}
	default:
		return t
	}
	tok := t.Test.Token
	negate := &nodes.Bool{Location: tok, Val: t.Test.Name == "undefined"}
	switch e := t.Expression.(type) {
	case *nodes.Name:
		return filtered(&nodes.None{Location: tok}, tok, names[0], &nodes.String{Location: tok, Val: e.Name.Val}, negate)
	case *nodes.GetAttribute:
		if base, ok := e.Node.(nodes.Expression); ok && e.Attribute != "" {
			return filtered(base, tok, names[1], &nodes.String{Location: tok, Val: e.Attribute}, negate)
		}
	}
	if c, k, ok := getItemParts(t.Expression); ok {
		return filtered(c, tok, names[2], k, negate)
	}
	return t
}

// printable wraps the expression of {{ ... }} so a None value prints "None"
// while an undefined one prints "", as in Jinja2.
func printable(e nodes.Expression) nodes.Expression {
	tok := e.Position()
	switch t := e.(type) {
	case *nodes.None:
		return &nodes.String{Location: t.Location, Val: "None"}
	case *nodes.Name:
		return filtered(t, tok, fPrintName, &nodes.String{Location: tok, Val: t.Name.Val})
	case *nodes.GetAttribute:
		if base, ok := t.Node.(nodes.Expression); ok && t.Attribute != "" {
			return filtered(base, tok, fPrintAttr, &nodes.String{Location: tok, Val: t.Attribute})
		}
	case *nodes.Call:
		return filtered(t, tok, fPrintNone)
	case *nodes.Conditional:
		// Each branch prints as it would alone; a missing else is
		// undefined, which prints nothing.
		t.Then = printable(t.Then)
		if t.Else == nil {
			t.Else = &nodes.String{Location: t.Location, Val: ""}
		} else {
			t.Else = printable(t.Else)
		}
		return t
	}
	if c, k, ok := getItemParts(e); ok {
		return filtered(c, tok, fPrintItem, k)
	}
	return filtered(e, tok, fPrintValue)
}

// iterated wraps a for loop's sequence so a None there raises as in Python
// while an undefined one iterates as empty; the engine loops zero times over both.
func iterated(e nodes.Expression) nodes.Expression {
	tok := e.Position()
	switch t := e.(type) {
	case *nodes.Name:
		return filtered(t, tok, fIterName, &nodes.String{Location: tok, Val: t.Name.Val})
	case *nodes.GetAttribute:
		if base, ok := t.Node.(nodes.Expression); ok && t.Attribute != "" {
			return filtered(base, tok, fIterAttr, &nodes.String{Location: tok, Val: t.Attribute})
		}
	}
	if c, k, ok := getItemParts(e); ok {
		return filtered(c, tok, fIterItem, k)
	}
	return e
}

// generatorFilters are the Jinja filters that return a generator, which
// json.dumps (tojson) refuses.
var generatorFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true}

// markGeneratorJSON makes tojson applied straight to a generator filter's
// result raise, as transformers' tojson (json.dumps) does.
func markGeneratorJSON(f *nodes.FilteredExpression) {
	prevGen := false
	if inner, ok := f.Expression.(*nodes.FilteredExpression); ok && len(inner.Filters) > 0 {
		prevGen = generatorFilters[inner.Filters[len(inner.Filters)-1].Name]
	}
	for _, fc := range f.Filters {
		if fc.Name == "tojson" && prevGen {
			fc.Name = fGeneratorJSON
		}
		prevGen = generatorFilters[fc.Name]
	}
}
