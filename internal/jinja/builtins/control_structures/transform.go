package controlStructures

import "github.com/helexa/helexa/internal/jinja/nodes"

// TransformChildren implementations let nodes.Transform reach the nodes
// each control structure holds.

func (acs *AutoescapeControlStructure) TransformChildren(t *nodes.Transformer) {
	t.Wrapper(acs.Wrapper)
}

func (c *CallControlStructure) TransformChildren(t *nodes.Transformer) {
	if c.Call != nil {
		if r, ok := t.Node(c.Call).(*nodes.Call); ok {
			c.Call = r
		}
	}
	t.Wrapper(c.Body)
}

func (c *DoControlStructure) TransformChildren(t *nodes.Transformer) {
	c.Expression = t.Expr(c.Expression)
}

func (fcs *FilterControlStructure) TransformChildren(t *nodes.Transformer) {
	t.Wrapper(fcs.bodyWrapper)
	t.FilterCalls(fcs.filterChain)
}

func (fcs *ForControlStructure) TransformChildren(t *nodes.Transformer) {
	fcs.ObjectEvaluator = t.Expr(fcs.ObjectEvaluator)
	fcs.IfCondition = t.Expr(fcs.IfCondition)
	t.Wrapper(fcs.BodyWrapper)
	t.Wrapper(fcs.EmptyWrapper)
}

func (ics *IfControlStructure) TransformChildren(t *nodes.Transformer) {
	t.Exprs(ics.Conditions)
	for _, w := range ics.Wrappers {
		t.Wrapper(w)
	}
}

func (mcs *MacroControlStructure) TransformChildren(t *nodes.Transformer) {
	t.Macro(mcs.Macro)
}

func (scs *SetControlStructure) TransformChildren(t *nodes.Transformer) {
	scs.target = t.Expr(scs.target)
	scs.expression = t.Expr(scs.expression)
	scs.condition = t.Expr(scs.condition)
	scs.alternative = t.Expr(scs.alternative)
	t.Wrapper(scs.body)
}

func (wcs *WithControlStructure) TransformChildren(t *nodes.Transformer) {
	t.ExprMap(wcs.pairs)
	t.Wrapper(wcs.wrapper)
}
