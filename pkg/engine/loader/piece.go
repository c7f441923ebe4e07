package loader

// Piece is the text id stands for inside prompt text, control tokens
// included ("<|im_end|>"): the engine checks with it that a chat prompt
// spliced from an earlier turn's ids stands for the text it rendered.
func (g engineTokenizer) Piece(id int32) string { return g.t.Piece(id, true) }
