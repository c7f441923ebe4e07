package chat

import (
	"fmt"

	"github.com/helexa/helexa/internal/jinja/exec"
	"github.com/helexa/helexa/internal/jinja/nodes"
	"github.com/helexa/helexa/internal/jinja/parser"
	"github.com/helexa/helexa/internal/jinja/tokens"
)

type parserFunc = parser.ControlStructureParser

// generationBlock is transformers' {% generation %}…{% endgeneration %}
// (it marks the assistant tokens for training masks): the body renders
// unchanged, in its own scope.
type generationBlock struct {
	Location *tokens.Token
	Wrapper  *nodes.Wrapper
}

func (g *generationBlock) Position() *tokens.Token { return g.Location }

func (g *generationBlock) String() string {
	return fmt.Sprintf("GenerationControlStructure(Line=%d Col=%d)", g.Location.Line, g.Location.Col)
}

func (g *generationBlock) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	return r.ExecuteWrapper(g.Wrapper)
}

func generationParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	g := &generationBlock{Location: p.Current()}
	if !args.End() {
		return nil, args.Error("generation takes no arguments", args.Current())
	}
	wrapper, endargs, err := p.WrapUntil("endgeneration")
	if err != nil {
		return nil, err
	}
	if !endargs.End() {
		return nil, endargs.Error("endgeneration takes no arguments", nil)
	}
	g.Wrapper = wrapper
	return g, nil
}

func (g *generationBlock) TransformChildren(t *nodes.Transformer) { t.Wrapper(g.Wrapper) }
