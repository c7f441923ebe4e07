package loader

import (
	"github.com/helexa/helexa/pkg/models/tokenizer"
	"github.com/helexa/helexa/pkg/runner"
)

// pythonTag is the one control token whose text a tool-call parser needs
// to see: Llama 3.1 starts built-in and code tool calls with it
// (`<|python_tag|>brave_search.call(query="…")`). Like llama.cpp and
// ollama, the runner keeps its text in the content of requests that
// declare tools; every other control token stays hidden.
const pythonTag = "<|python_tag|>"

// NewToolDecoder is NewDecoder that also renders pythonTag when the
// vocabulary has it as a control token.
func (g ggufTokenizer) NewToolDecoder() runner.Decoder {
	d := g.t.NewDecoderWith(tokenizer.DecodeOptions{Continuation: true})
	id, ok := g.t.TokenID(pythonTag)
	if !ok || !g.t.IsControl(id) {
		return d
	}
	return keepDecoder{d: d, id: id, text: pythonTag}
}

// keepDecoder renders token id as text and decodes the rest with d.
type keepDecoder struct {
	d    *tokenizer.StreamDecoder
	id   int32
	text string
}

// Add emits the kept token's text after whatever d holds (bytes of a
// character the tag interrupts can no longer complete).
func (k keepDecoder) Add(id int32) string {
	if id == k.id {
		return k.d.Flush() + k.text
	}
	return k.d.Add(id)
}

func (k keepDecoder) Flush() string { return k.d.Flush() }
