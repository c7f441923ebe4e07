package compute

// Backend is the set of coarse operations architectures are written
// against, over tensors, weights and KV stores the backend owns. A batch is
// a tensor whose rows are tokens. Implementations are driven by one
// goroutine at a time. Operations report misuse (shapes that do not fit) as
// errors or panics; a panic is a device failure to the caller.
//
// Every operation here is one every backend has; what only some backends
// can do is an optional interface beside it (FitBackend, PinnedBackend,
// PairedMatMulBackend), checked with a type assertion. The composite
// operations (AddRMSNorm, RMSNormPair, RoPEPairStoreKV,
// NormRoPEPairStoreKV, GatedMatMul) each give exactly what the sequence of
// operations they name gives: a GPU runs each as one launch, the CPU as
// that sequence. docs/compute.md says how to add an operation.
type Backend interface {
	// Prepare makes a weight usable by the backend (a GPU uploads it; the
	// CPU uses the mapped file as it is). Every weight and vector an
	// architecture uses goes through it once, before the first pass.
	Prepare(w *Weight) error
	// PrepareVector is Prepare for a parameter vector.
	PrepareVector(v *Vector) error

	// NewTensor allocates a rows × cols tensor (contents undefined).
	NewTensor(rows, cols int) (Tensor, error)
	// View is the first rows × cols values of t seen with another shape
	// (sharing memory): a batch of fewer rows, or rows split into heads.
	View(t Tensor, rows, cols int) Tensor
	// Free releases a tensor (and every view of it).
	Free(t Tensor)
	// Write copies host values into t (len(src) = Rows×Cols).
	Write(t Tensor, src []float32) error
	// ReadRow copies row r of t to the host.
	ReadRow(t Tensor, r int, dst []float32) error
	// Zero sets every value of t to 0 (a recurrent state's reset).
	Zero(t Tensor)
	// Copy copies src into dst, a tensor of the same shape (a recurrent
	// state's snapshot).
	Copy(dst, src Tensor)

	// NewKV allocates a paged KV store.
	NewKV(s KVShape) (KV, error)

	// Embed writes the rows of table selected by tokens into out
	// (len(tokens) × table.Cols()), dequantizing them.
	Embed(table *Weight, tokens []int32, out Tensor) error
	// MatMul computes out[r] = w · x[r] for every row r of x: x is n ×
	// w.Cols(), out is n × w.Rows().
	MatMul(w *Weight, x, out Tensor) error
	// MatMuls computes outs[i] = MatMul(ws[i], x) for every i, in one
	// pass: the CPU quantizes x once and shares one parallel loop over
	// every weight's rows; a GPU shares launches between the products of
	// weights of one format (q, k and v; gate and up).
	MatMuls(ws []*Weight, x Tensor, outs []Tensor) error
	// GatedMatMul writes SwiGLU(gate·x, up·x) into h, as MatMuls([gate,
	// up], x, [g, u]) and SwiGLU(g, u, h) do; g and u may be left
	// unwritten.
	GatedMatMul(gate, up *Weight, x, g, u, h Tensor) error

	// RMSNorm normalises each row of x (width len(weight.Data)) and
	// multiplies it by weight, writing out (which may be x).
	RMSNorm(x Tensor, weight *Vector, eps float32, out Tensor)
	// AddRMSNorm is Add(x, y), then RMSNorm(x, w, eps, out): a layer's
	// residual add and the next norm.
	AddRMSNorm(x, y Tensor, w *Vector, eps float32, out Tensor)
	// RMSNormPair is RMSNorm(x1, w1, eps, out1) and RMSNorm(x2, w2, eps,
	// out2).
	RMSNormPair(x1 Tensor, w1 *Vector, out1 Tensor, x2 Tensor, w2 *Vector, out2 Tensor, eps float32)
	// RoPE rotates in place each row of x, which holds heads × headDim
	// values, by the position pos[row].
	RoPE(x Tensor, pos []int32, heads, headDim int, r *Rope)

	// StoreKV writes the rows of k and v (KVDim wide) into layer's store
	// at their sequences' positions.
	StoreKV(kv KV, layer int, spans []SeqSpan, k, v Tensor)
	// RoPEPairStoreKV is RoPE(q, pos, qHeads, headDim, r), RoPE(k, pos,
	// kHeads, headDim, r) and StoreKV(kv, layer, spans, k, v).
	RoPEPairStoreKV(q, k, v Tensor, pos []int32, qHeads, kHeads, headDim int, r *Rope, kv KV, layer int, spans []SeqSpan)
	// NormRoPEPairStoreKV is RMSNormPair over the heads of q (weight
	// qNorm) and of k (kNorm), in place, then RoPEPairStoreKV; both
	// weights are headDim wide.
	NormRoPEPairStoreKV(q, k, v Tensor, qNorm, kNorm *Vector, eps float32, pos []int32, qHeads, kHeads, headDim int,
		r *Rope, kv KV, layer int, spans []SeqSpan)
	// Attention computes causal attention of the query rows q (Heads ×
	// HeadDim wide) over each sequence's cached positions [0, pos],
	// writing out (same shape as q).
	Attention(kv KV, layer int, spans []SeqSpan, a *Attn, q, out Tensor)
	// AttentionWindow is Attention where the query at position p sees only
	// the cached positions p-window+1 … p (llama.cpp's standard SWA mask:
	// key position k is masked when p-k >= window; Gemma 3's local
	// layers). window > 0.
	AttentionWindow(kv KV, layer int, spans []SeqSpan, a *Attn, window int, q, out Tensor)

	// SwiGLU writes out[i] = silu(gate[i]) * up[i].
	SwiGLU(gate, up, out Tensor)
	// GeGLU writes out[i] = gelu(gate[i]) * up[i], with the tanh
	// approximation of GELU (Gemma's FFN activation).
	GeGLU(gate, up, out Tensor)
	// SigmoidMul multiplies x by sigmoid(gate): element by element, or,
	// when gate has one column, each row of x by its row's gate.
	SigmoidMul(x, gate Tensor)
	// Softcap replaces every value v of t by tanh(v/c)·c (Gemma's final
	// logits).
	Softcap(t Tensor, c float32)
	// Add adds src to dst element-wise.
	Add(dst, src Tensor)
	// AddRow adds bias to every row of x.
	AddRow(x Tensor, bias *Vector)
	// GatherRows writes dst[i] = src[rows[i]].
	GatherRows(src Tensor, rows []int32, dst Tensor)
	// ScaleRowsTo writes dst[to[i]] = scale[i] * src[i] (rows of dst not
	// named are left as they are).
	ScaleRowsTo(src Tensor, to []int32, scale []float32, dst Tensor)
	// SumRowGroups writes out[r] = src[r*k] + src[r*k+1] + … +
	// src[r*k+k-1], added in that order.
	SumRowGroups(src Tensor, k int, out Tensor)
	// SplitHeads splits every row of src, heads groups of a+b values, into
	// the first a values of each group (dstA, heads·a wide) and the other
	// b (dstB).
	SplitHeads(src Tensor, heads, a int, dstA, dstB Tensor)

	// MoERoute turns router logits (n × nExpert) into probabilities
	// (softmax, written to probs, n × nExpert) and picks the k most
	// probable experts per row (experts, n × k, most probable first) with
	// their probabilities renormalised to sum to 1 (weights, n × k). The
	// choices come back to the host: they drive which expert weights the
	// next operations use (RouteRows is the host reference).
	MoERoute(logits Tensor, k int, probs Tensor, experts []int32, weights []float32)

	// ConvSiLU runs a causal depthwise convolution of kernel width K over
	// each span's rows of x (n × C) and applies SiLU, writing out (n × C):
	// a recurrent (linear-attention) layer's input mix. w holds K × C
	// taps, oldest first, channel-minor (tap j of channel c at j·C+c);
	// states[i] is (K-1) × C, the inputs before span i, and is left
	// holding the span's last K-1 inputs. A recurrent layer keeps, per
	// sequence, state tensors the caller allocates with NewTensor and
	// clears with Zero; span i of a batch reads and updates states[i].
	ConvSiLU(x Tensor, spans []SeqSpan, states []Tensor, w *Vector, out Tensor)
	// GatedDeltaNet runs the gated delta rule over each span's rows, token
	// by token: q and k are L2-normalised per head, beta = sigmoid(beta),
	// S ← S·decay, S += beta·(v − S·k)·kᵀ, out = S·q/sqrt(Dim). qkv is n ×
	// (2·KHeads+VHeads)·Dim (normalised in place), alpha and beta n ×
	// VHeads, out n × VHeads·Dim; states[i] is (VHeads·Dim) × Dim, row
	// h·Dim+j holding S[j][·] of value head h.
	GatedDeltaNet(qkv, alpha, beta Tensor, spans []SeqSpan, states []Tensor, d *DeltaNet, out Tensor)

	// ArgMaxRows writes into out[i] the index of the largest finite value
	// of row rows[i] of t (the lowest index on ties), or -1 when the row
	// has none: greedy decoding reads token ids, not logits, back from the
	// backend. It checks its arguments with CheckArgMaxRows.
	ArgMaxRows(t Tensor, rows []int32, out []int32) error
	// AllReduce sums t element-wise across the ranks of a tensor-parallel
	// group, leaving the sum in every rank's t. A no-op on one rank.
	AllReduce(t Tensor) error
	// Close releases the backend's workers and memory.
	Close() error
}
