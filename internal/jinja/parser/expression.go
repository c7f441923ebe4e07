package parser

import (
	"fmt"
	"github.com/helexa/helexa/internal/jinja/nodes"
	"github.com/helexa/helexa/internal/jinja/tokens"
)

// ParseFilterExpression parses an optionnal filter chain for a node
func (p *Parser) ParseFilterExpression(expr nodes.Expression) (nodes.Expression, error) {

	if p.Current(tokens.Pipe) != nil {

		filtered := &nodes.FilteredExpression{
			Expression: expr,
		}
		for p.Match(tokens.Pipe) != nil {

			filter, err := p.ParseFilter()
			if err != nil {
				return nil, err
			}

			filtered.Filters = append(filtered.Filters, filter)
		}
		expr = filtered
	}

	return expr, nil
}

// ParseExpression parses an expression with optional filters
// Nested expression should call this method
func (p *Parser) ParseExpression() (nodes.Expression, error) {
	var expr nodes.Expression
	if err := p.enterAt(p.Current()); err != nil {
		return nil, err
	}
	defer p.leave(1)

	expr, err := p.ParseLogicalExpression()
	if err != nil {
		return nil, err
	}

	expr, err = p.ParseFilterExpression(expr)
	if err != nil {
		return nil, err
	}

	return expr, nil
}

// ParseCondExpression parses an expression that may be a conditional
// expression, "a if c else b" or "a if c" (Jinja's with_condexpr): inside
// brackets, arguments, subscripts and the else branch of another
// conditional. At the top of {{ }} and set the caller handles "if" itself
// (ParseCondition), and a for loop's "if" filters its items.
func (p *Parser) ParseCondExpression() (nodes.Expression, error) {
	expr, err := p.ParseExpression()
	if err != nil || expr == nil {
		return expr, err
	}
	tok := p.MatchName("if")
	if tok == nil {
		return expr, nil
	}
	if err := p.enterAt(tok); err != nil {
		return nil, err
	}
	defer p.leave(1)
	cond, err := p.ParseExpression()
	if err != nil {
		return nil, err
	}
	if cond == nil {
		return nil, p.Error("Expected a condition", p.Current())
	}
	c := &nodes.Conditional{Location: tok, Then: expr, Cond: cond}
	if p.MatchName("else") != nil {
		alt, err := p.ParseCondExpression()
		if err != nil {
			return nil, err
		}
		if alt == nil {
			return nil, p.Error("Expected an alternative", p.Current())
		}
		c.Else = alt
	}
	return c, nil
}

func (p *Parser) ParseCondition() (nodes.Expression, nodes.Expression, error) {
	var returnedCondition, returnedAlternative nodes.Expression
	if p.MatchName("if") != nil {
		condition, err := p.ParseExpression()
		if err != nil {
			return nil, nil, err
		}
		if condition == nil {
			return nil, nil, p.Error("Expected a condition", p.Current())
		}
		returnedCondition = condition

		if p.MatchName("else") != nil {
			alternative, err := p.ParseCondExpression()
			if err != nil {
				return nil, nil, err
			}
			if alternative == nil {
				return nil, nil, p.Error("Expected an alternative", p.Current())
			}
			returnedAlternative = alternative
		}
	}

	return returnedCondition, returnedAlternative, nil
}

func (p *Parser) ParseExpressionNode() (nodes.Node, error) {

	tok := p.Match(tokens.VariableBegin)
	if tok == nil {
		return nil, p.Error(fmt.Sprintf("'%s' expected here", p.Config.VariableStartString), p.Current())
	}

	node := &nodes.Output{
		Start: tok,
	}

	expr, err := p.ParseExpression()
	if err != nil {
		return nil, err
	}
	if expr == nil {
		return nil, p.Error("Expected an expression.", p.Current())
	}
	node.Expression = expr

	condition, alternative, err := p.ParseCondition()
	if err != nil {
		return nil, err
	}
	if condition != nil {
		node.Condition = condition
	}
	if alternative != nil {
		node.Alternative = alternative
	}
	tok = p.Match(tokens.VariableEnd)
	if tok == nil {
		return nil, p.Error(fmt.Sprintf("'%s' expected here", p.Config.VariableEndString), p.Current())
	}
	node.End = tok
	if data := p.Current(tokens.Data); data != nil {
		data.Trim = data.Trim || len(node.End.Val) > 0 && node.End.Val[0] == '-'
	}

	return node, nil
}
