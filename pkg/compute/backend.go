package compute

// RopeMode selects which elements RoPE rotates together.
type RopeMode int

// RoPE modes (ggml's names).
const (
	// RopeNorm rotates adjacent pairs (x[2i], x[2i+1]): llama.
	RopeNorm RopeMode = iota
	// RopeNeox rotates halves (x[i], x[i+n/2]): qwen2, qwen3.
	RopeNeox
)

// Rope configures rotary position embeddings.
type Rope struct {
	Mode      RopeMode
	Dims      int     // rotated dimensions per head (n_rot); the rest pass through
	Base      float32 // frequency base (theta)
	FreqScale float32 // 1/linear scaling factor; 1 = no scaling
	// FreqFactors, when set, divide each pair's angle (llama3 rope_freqs);
	// Dims/2 entries.
	FreqFactors []float32
}

// Attn configures attention.
type Attn struct {
	Heads, KVHeads, HeadDim int
	Scale                   float32 // usually 1/sqrt(HeadDim)
}

// Backend is the set of coarse operations architectures are written
// against. Activations are row-major F32 matrices: a batch of rows, each of
// the given width. Implementations are driven by one goroutine at a time.
type Backend interface {
	// Embed copies the rows of table selected by tokens into out
	// (len(tokens) × table.Cols()), dequantizing them.
	Embed(table *Weight, tokens []int32, out []float32) error
	// MatMul computes out[r] = w · x[r] for rows r < nRows: x is nRows ×
	// w.Cols(), out is nRows × w.Rows().
	MatMul(w *Weight, x []float32, nRows int, out []float32) error
	// RMSNorm normalises each of the nRows rows of x (width len(weight))
	// and multiplies by weight, writing out (which may be x).
	RMSNorm(x []float32, nRows int, weight []float32, eps float32, out []float32)
	// RoPE rotates in place each row of x, which holds heads × headDim
	// values, by the position pos[row].
	RoPE(x []float32, pos []int32, heads, headDim int, r *Rope)
	// StoreKV writes the rows of k and v (KVDim wide) into the cache at
	// their sequences' positions.
	StoreKV(kv *KVCache, layer int, spans []SeqSpan, k, v []float32)
	// Attention computes causal attention of the query rows q (Heads ×
	// HeadDim wide) over each sequence's cached positions [0, pos], writing
	// out (same shape as q).
	Attention(kv *KVCache, layer int, spans []SeqSpan, a *Attn, q, out []float32)
	// SwiGLU writes out[i] = silu(gate[i]) * up[i].
	SwiGLU(gate, up, out []float32)
	// Add adds src to dst element-wise.
	Add(dst, src []float32)
	// MoERoute turns router logits (nRows × nExpert) into probabilities
	// (softmax, written to probs) and picks the k most probable experts per
	// row (experts, nRows × k, most probable first) with their
	// probabilities renormalised to sum to 1 (weights, nRows × k).
	MoERoute(logits []float32, nRows, nExpert, k int, probs []float32, experts []int32, weights []float32)
	// Close stops the backend's workers.
	Close() error
}
