package chat

import (
	"strings"

	"github.com/helexa/helexa/internal/jinja/config"
	"github.com/helexa/helexa/internal/jinja/tokens"
)

// maxConditionals bounds the rewriting loop (one conditional per pass).
const maxConditionals = 1000

// lowerNestedConditionals rewrites conditional expressions that sit inside
// brackets, e.g. {{ 'x' + (a if c else b) }} or f(a if c else b), which
// gonja's parser rejects (it only knows them at the top of {{ }} and set).
// Each becomes ((c) and [a] or [b])[0]: gonja's and/or short-circuit and
// return their operands like Python, and a one-element list is always true,
// so only the chosen branch is evaluated (without else, the false case is
// [][0]: undefined). Text outside tags is untouched.
func lowerNestedConditionals(src string, cfg *config.Config) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	if !strings.Contains(src, "if") {
		return src
	}
	for range maxConditionals {
		next, ok := lowerOneConditional(src, cfg)
		if !ok {
			return src
		}
		src = next
	}
	return src
}

func lexTokens(src string, cfg *config.Config) []*tokens.Token {
	s := tokens.LexAll(src, cfg)
	var out []*tokens.Token
	for !s.End() {
		out = append(out, s.Next())
	}
	return out
}

// bracketDepths gives each token's bracket depth inside its tag (the
// brackets themselves count as outside), resetting at tag boundaries, and
// the index of the innermost open bracket enclosing it (-1 when none).
func bracketDepths(toks []*tokens.Token) (depth, open []int) {
	depth, open = make([]int, len(toks)), make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		switch t.Type {
		case tokens.VariableBegin, tokens.BlockBegin, tokens.VariableEnd, tokens.BlockEnd, tokens.Data:
			stack = stack[:0]
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		depth[i] = len(stack)
		open[i] = -1
		if len(stack) > 0 {
			open[i] = stack[len(stack)-1]
		}
		switch t.Type {
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			stack = append(stack, i)
		}
	}
	return depth, open
}

func isSeparator(t *tokens.Token) bool {
	return t.Type == tokens.Comma || t.Type == tokens.Colon || t.Type == tokens.Assign
}

func isName(t *tokens.Token, name string) bool { return t.Type == tokens.Name && t.Val == name }

// lowerOneConditional rewrites the first bracketed conditional expression.
func lowerOneConditional(src string, cfg *config.Config) (string, bool) {
	toks := lexTokens(src, cfg)
	depth, open := bracketDepths(toks)
	for i, t := range toks {
		if isName(t, "if") && depth[i] == 0 {
			if out, ok := lowerSetWithoutElse(src, toks, depth, i); ok {
				return out, true
			}
		}
		if !isName(t, "if") || depth[i] == 0 {
			continue
		}
		d := depth[i]
		start := i
		for start-1 > open[i] && !(depth[start-1] == d && isSeparator(toks[start-1])) {
			start--
		}
		end, elseAt := i+1, -1
		for end < len(toks) && depth[end] >= d && !(depth[end] == d && isSeparator(toks[end])) {
			if elseAt < 0 && depth[end] == d && isName(toks[end], "else") {
				elseAt = end
			}
			end++
		}
		if start == i || end >= len(toks) || end == i+1 {
			continue // malformed: leave it to the parser's error
		}
		a := src[toks[start].Pos:t.Pos]
		// Without else, the false case indexes an empty list: undefined.
		c, b := src[t.Pos+len("if"):toks[end].Pos], ""
		if elseAt >= 0 {
			c, b = src[t.Pos+len("if"):toks[elseAt].Pos], src[toks[elseAt].Pos+len("else"):toks[end].Pos]
		}
		repl := "((" + c + ") and [" + a + "] or [" + b + "])[0]"
		return src[:toks[start].Pos] + repl + src[toks[end].Pos:], true
	}
	return src, false
}

// lowerSetWithoutElse rewrites {% set x = a if c %} (no else, which gonja's
// set parser rejects) to {% if c %}{% set x = a %}{% endif %}: Jinja
// gives x Undefined when c is false, and gonja cannot hold an Undefined in
// a variable, so x is left unset instead (the same unless x was set
// before). i is the index of the if token.
func lowerSetWithoutElse(src string, toks []*tokens.Token, depth []int, i int) (string, bool) {
	begin, assign := -1, -1
	for j := i - 1; j >= 0 && begin < 0; j-- {
		switch {
		case toks[j].Type == tokens.BlockBegin:
			begin = j
		case toks[j].Type == tokens.VariableBegin || toks[j].Type == tokens.Data:
			return src, false
		case toks[j].Type == tokens.Assign && depth[j] == 0:
			assign = j
		}
	}
	if begin < 0 || assign < 0 || !isName(toks[begin+1], "set") || assign+1 == i {
		return src, false
	}
	end := i + 1
	for end < len(toks) && toks[end].Type != tokens.BlockEnd {
		if depth[end] == 0 && isName(toks[end], "else") {
			return src, false
		}
		end++
	}
	if end >= len(toks) || end == i+1 {
		return src, false
	}
	open := src[toks[begin].Pos:toks[begin+1].Pos]    // "{%-" and the space after it
	target := src[toks[begin+1].Pos:toks[assign].Pos] // "set x "
	value := src[toks[assign].Pos:toks[i].Pos]        // "= a "
	cond := src[toks[i].Pos:toks[end].Pos]            // "if c "
	closeTag := toks[end].Val
	repl := open + cond + "%}{% " + target + value + "%}{% endif " + closeTag
	return src[:toks[begin].Pos] + repl + src[toks[end].Pos+len(closeTag):], true
}
