package loader

import (
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/models/format"
)

// outputFormat adapts a model's format.Format to the engine's OutputFormat.
type outputFormat struct{ f format.Format }

func (o outputFormat) NewParser(p engine.ParseOptions) engine.OutputParser {
	return outputParser{o.f.NewParser(format.Options{
		Prompt: p.Prompt, NoReasoning: p.NoReasoning, Tools: p.Tools,
		Choice: format.Choice{Required: p.ToolChoice.Required, Name: p.ToolChoice.Name},
	})}
}

// outputParser adapts format.OutputParser to the engine's OutputParser.
type outputParser struct{ p *format.OutputParser }

func (o outputParser) Push(text string) engine.Delta { return delta(o.p.Push(text)) }
func (o outputParser) Flush() engine.Delta           { return delta(o.p.Flush()) }

// delta converts a parsed piece; calls keep the model's own id ("" when
// its format writes none: the engine names them).
func delta(pc format.Piece) engine.Delta {
	d := engine.Delta{Reasoning: pc.Reasoning, Content: pc.Content}
	if len(pc.Calls) > 0 {
		d.ToolCalls = make([]engine.ToolCall, len(pc.Calls))
		for i, c := range pc.Calls {
			d.ToolCalls[i] = engine.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		}
	}
	return d
}
