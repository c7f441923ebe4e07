package loader

import (
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/models/tokenizer"
)

// pythonTag is a control token whose text a tool-call parser needs to see:
// Llama 3.1 starts built-in and code tool calls with it
// (`<|python_tag|>brave_search.call(query="…")`). Like llama.cpp and
// ollama, the runner keeps its text in the content of requests that
// declare tools, together with the tool-call markers of the model's family
// (format.Format.ToolMarkers: [TOOL_CALLS], <｜tool▁calls▁begin｜>, ...);
// the reasoning markers of its format ([THINK], <seed:think>, ...) are
// kept in every request, for the reasoning splitter. Every other control
// token stays hidden.
const pythonTag = "<|python_tag|>"

// NewToolDecoder is NewDecoder that also renders pythonTag and the
// model's tool-call markers when the vocabulary has them as control tokens.
func (g engineTokenizer) NewToolDecoder() engine.Decoder {
	return g.keeping(append([]string{pythonTag}, append(g.toolMarkers, g.thinkMarkers...)...))
}

// NewDecoder decodes generated tokens, which always continue a prompt: a
// SentencePiece leading space on the first piece is kept; the reasoning
// markers of the model's format are rendered even when they are control
// tokens.
func (g engineTokenizer) NewDecoder() engine.Decoder { return g.keeping(g.thinkMarkers) }

// keeping returns a decoder that renders the control tokens among texts.
func (g engineTokenizer) keeping(texts []string) engine.Decoder {
	d := g.t.NewDecoderWith(tokenizer.DecodeOptions{Continuation: true})
	keep := map[int32]string{}
	for _, s := range texts {
		if id, ok := g.t.TokenID(s); ok && g.t.IsControl(id) {
			keep[id] = s
		}
	}
	if len(keep) == 0 {
		return d
	}
	return keepDecoder{d: d, keep: keep}
}

// keepDecoder renders the kept tokens as their text and decodes the rest
// with d.
type keepDecoder struct {
	d    *tokenizer.StreamDecoder
	keep map[int32]string
}

// Add emits a kept token's text after whatever d holds (bytes of a
// character the tag interrupts can no longer complete).
func (k keepDecoder) Add(id int32) string {
	if text, ok := k.keep[id]; ok {
		return k.d.Flush() + text
	}
	return k.d.Add(id)
}

func (k keepDecoder) Flush() string { return k.d.Flush() }
