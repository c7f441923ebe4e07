package nodes

// Transformable is implemented by nodes defined outside this package
// (control structures) so a Transformer can reach the nodes they hold.
type Transformable interface {
	Node
	// TransformChildren replaces each child node c with t.Node(c) (or
	// t.Expr, t.Wrapper for the typed fields).
	TransformChildren(t *Transformer)
}

// Transformer rewrites a parsed tree bottom-up: every node's children are
// transformed first, then the node itself is passed to the function, whose
// result replaces it where the holding field's type allows. A node reached
// twice (the same pointer) is transformed once and replaced by the same
// result.
type Transformer struct {
	fn   func(Node) Node
	memo map[Node]Node
}

// Transform rewrites the tree under root with fn (see Transformer).
func Transform(root *Template, fn func(Node) Node) {
	t := &Transformer{fn: fn, memo: map[Node]Node{}}
	for i, n := range root.Nodes {
		root.Nodes[i] = t.Node(n)
	}
	for _, m := range root.Macros {
		t.Macro(m)
	}
	for _, w := range root.Blocks {
		t.Wrapper(w)
	}
}

// Node transforms n and returns its replacement (n itself when unchanged).
func (t *Transformer) Node(n Node) Node {
	if n == nil || isNilNode(n) {
		return n
	}
	if r, ok := t.memo[n]; ok {
		return r
	}
	t.memo[n] = n // a node reached again while its children are transformed stays as is
	t.children(n)
	r := t.fn(n)
	t.memo[n] = r
	return r
}

// Expr transforms an expression.
func (t *Transformer) Expr(e Expression) Expression { return t.Node(e) }

// Exprs transforms a list of expressions in place.
func (t *Transformer) Exprs(es []Expression) {
	for i, e := range es {
		es[i] = t.Expr(e)
	}
}

// ExprMap transforms a map of expressions in place.
func (t *Transformer) ExprMap(m map[string]Expression) {
	for k, e := range m {
		m[k] = t.Expr(e)
	}
}

// Wrapper transforms the nodes of a body in place.
func (t *Transformer) Wrapper(w *Wrapper) {
	if w != nil {
		t.Node(w)
	}
}

// Macro transforms a macro's defaults and body in place.
func (t *Transformer) Macro(m *Macro) {
	if m != nil {
		t.Node(m)
	}
}

// Pairs transforms keys and values in place.
func (t *Transformer) Pairs(ps []*Pair) {
	for _, p := range ps {
		if p != nil {
			p.Key = t.Expr(p.Key)
			p.Value = t.Expr(p.Value)
		}
	}
}

// FilterCalls transforms the arguments of filter calls in place.
func (t *Transformer) FilterCalls(fcs []*FilterCall) {
	for _, fc := range fcs {
		if fc != nil {
			t.Exprs(fc.Args)
			t.ExprMap(fc.Kwargs)
		}
	}
}

func (t *Transformer) children(n Node) {
	switch x := n.(type) {
	case *Output:
		x.Expression = t.Expr(x.Expression)
		x.Condition = t.Expr(x.Condition)
		x.Alternative = t.Expr(x.Alternative)
	case *FilteredExpression:
		x.Expression = t.Expr(x.Expression)
		t.FilterCalls(x.Filters)
	case *TestExpression:
		x.Expression = t.Expr(x.Expression)
		if x.Test != nil {
			t.Exprs(x.Test.Args)
			t.ExprMap(x.Test.Kwargs)
		}
	case *List:
		t.Exprs(x.Val)
	case *Tuple:
		t.Exprs(x.Val)
	case *Dict:
		t.Pairs(x.Pairs)
	case *Pair:
		x.Key = t.Expr(x.Key)
		x.Value = t.Expr(x.Value)
	case *Variable:
		for _, p := range x.Parts {
			if p != nil {
				t.Exprs(p.Args)
				t.ExprMap(p.Kwargs)
			}
		}
	case *Call:
		x.Func = t.Node(x.Func)
		x.Parent = t.Node(x.Parent)
		t.Exprs(x.Args)
		t.ExprMap(x.Kwargs)
	case *GetItem:
		x.Node = t.Node(x.Node)
		x.Arg = t.Node(x.Arg)
	case *GetSlice:
		x.Node = t.Node(x.Node)
		x.Start = t.Node(x.Start)
		x.End = t.Node(x.End)
		x.Step = t.Node(x.Step)
	case *GetAttribute:
		x.Node = t.Node(x.Node)
	case *Conditional:
		x.Then = t.Expr(x.Then)
		x.Cond = t.Expr(x.Cond)
		x.Else = t.Expr(x.Else)
	case *Negation:
		x.Term = t.Expr(x.Term)
	case *UnaryExpression:
		x.Term = t.Expr(x.Term)
	case *BinaryExpression:
		x.Left = t.Expr(x.Left)
		x.Right = t.Expr(x.Right)
	case *ControlStructureBlock:
		x.ControlStructure = t.Node(x.ControlStructure)
	case *Wrapper:
		for i, c := range x.Nodes {
			x.Nodes[i] = t.Node(c)
		}
	case *Macro:
		t.Pairs(x.Kwargs)
		t.Wrapper(x.Wrapper)
	case Transformable:
		x.TransformChildren(t)
	}
}

// isNilNode reports a typed nil pointer held in a Node interface.
func isNilNode(n Node) bool {
	switch x := n.(type) {
	case *Output:
		return x == nil
	case *FilteredExpression:
		return x == nil
	case *TestExpression:
		return x == nil
	case *List:
		return x == nil
	case *Tuple:
		return x == nil
	case *Dict:
		return x == nil
	case *Call:
		return x == nil
	case *GetItem:
		return x == nil
	case *GetSlice:
		return x == nil
	case *GetAttribute:
		return x == nil
	case *BinaryExpression:
		return x == nil
	case *Conditional:
		return x == nil
	case *Wrapper:
		return x == nil
	case *Macro:
		return x == nil
	}
	return false
}
