package compute

// DeltaNet configures a gated delta-rule layer (Qwen3.5's linear
// attention). Each row of the layer's qkv input holds KHeads query heads,
// KHeads key heads and VHeads value heads of Dim values each, in that
// order; value head h reads query and key head h % KHeads (GGUF: llama.cpp's
// converter tiles the value heads over the key heads), or with Grouped
// h / (VHeads/KHeads) (Hugging Face checkpoints group them by key head).
type DeltaNet struct {
	KHeads, VHeads, Dim int
	Grouped             bool
	// Eps bounds the L2 norm of q and k from below.
	Eps float32
	// DtBias and A are per value head: the decay of a token is
	// exp(softplus(alpha + DtBias) · A), A negative.
	DtBias, A *Vector
}

// KeyHead is the query/key head value head h reads.
func (d *DeltaNet) KeyHead(h int) int {
	if d.Grouped {
		return h / (d.VHeads / d.KHeads)
	}
	return h % d.KHeads
}
