package loader

import (
	"strings"
	"testing"
)

// TestPieceSpellsPrompt: the pieces of a chat prompt's ids spell the
// prompt exactly, control tokens as their text, which is what lets the
// engine check a prompt spliced from an earlier turn's ids; control tokens
// have pieces but no output text.
func TestPieceSpellsPrompt(t *testing.T) {
	g := llama3Tokenizer(t)
	text := "<|start_header_id|>user<|end_header_id|>\n\nWhat's 2+2? Ünïcode too.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
	ids, err := g.Encode(text, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(g.Piece(id))
	}
	if b.String() != text {
		t.Errorf("pieces spell %q, want %q", b.String(), text)
	}
	if got := g.Piece(llamaEOT); got != "<|eot_id|>" || g.TokenText(llamaEOT) != "" {
		t.Errorf("<|eot_id|>: piece %q, text %q; want its text as the piece and no output text", got, g.TokenText(llamaEOT))
	}
}
