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

// Tensor is an activation matrix owned by a backend: Rows × Cols F32
// values, row-major, in host memory on the CPU and device memory on a GPU.
// Architectures only pass tensors between backend operations; they never
// touch the values.
type Tensor interface {
	Rows() int
	Cols() int
}

// KV is a backend's paged key/value store for every layer of one model
// (see KVShape for the paging).
type KV interface {
	Shape() KVShape
	// BlockBytes is the memory one block takes over all layers.
	BlockBytes() int64
	// Bytes is the memory of the whole store.
	Bytes() int64
}

// Vector is a small F32 parameter of a model (a norm weight, a bias) kept
// on the host; a backend may mirror it on its device in Prepare.
type Vector struct {
	Name string
	Data []float32
	// Dev is the backend's own copy (nil on the CPU).
	Dev any
}

// Backend is the set of coarse operations architectures are written
// against, over tensors, weights and KV stores the backend owns. A batch is
// a tensor whose rows are tokens. Implementations are driven by one
// goroutine at a time. Operations report misuse (shapes that do not fit) as
// errors or panics; a panic is a device failure to the caller.
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

	// NewKV allocates a paged KV store.
	NewKV(s KVShape) (KV, error)

	// Embed writes the rows of table selected by tokens into out
	// (len(tokens) × table.Cols()), dequantizing them.
	Embed(table *Weight, tokens []int32, out Tensor) error
	// MatMul computes out[r] = w · x[r] for every row r of x: x is n ×
	// w.Cols(), out is n × w.Rows().
	MatMul(w *Weight, x, out Tensor) error
	// RMSNorm normalises each row of x (width len(weight.Data)) and
	// multiplies it by weight, writing out (which may be x).
	RMSNorm(x Tensor, weight *Vector, eps float32, out Tensor)
	// RoPE rotates in place each row of x, which holds heads × headDim
	// values, by the position pos[row].
	RoPE(x Tensor, pos []int32, heads, headDim int, r *Rope)
	// StoreKV writes the rows of k and v (KVDim wide) into layer's store
	// at their sequences' positions.
	StoreKV(kv KV, layer int, spans []SeqSpan, k, v Tensor)
	// Attention computes causal attention of the query rows q (Heads ×
	// HeadDim wide) over each sequence's cached positions [0, pos],
	// writing out (same shape as q).
	Attention(kv KV, layer int, spans []SeqSpan, a *Attn, q, out Tensor)
	// SwiGLU writes out[i] = silu(gate[i]) * up[i].
	SwiGLU(gate, up, out Tensor)
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
	// MoERoute turns router logits (n × nExpert) into probabilities
	// (softmax, written to probs, n × nExpert) and picks the k most
	// probable experts per row (experts, n × k, most probable first) with
	// their probabilities renormalised to sum to 1 (weights, n × k). The
	// choices come back to the host: they drive which expert weights the
	// next operations use.
	MoERoute(logits Tensor, k int, probs Tensor, experts []int32, weights []float32)
	// AllReduce sums t element-wise across the ranks of a tensor-parallel
	// group, leaving the sum in every rank's t. A no-op on one rank.
	AllReduce(t Tensor) error
	// Close releases the backend's workers and memory.
	Close() error
}

// FitBackend is a backend whose memory is finite and apart from the
// host's (a GPU): an optional extension. Before the first weight is
// prepared, CheckFits fails when the model's weights and vectors would not
// fit, with an error that says by how much.
type FitBackend interface {
	CheckFits(ws []*Weight, vs []*Vector) error
}

// PinnedBackend is a backend whose calls are cheapest from one thread of
// its own (a GPU context is current on one OS thread; any other goroutine
// hands each call over to it): an optional extension. Pinned runs f on
// that thread, where the backend's calls made by f need no hand-off, and
// returns when f has; a panic in f is raised again in the caller.
type PinnedBackend interface {
	Pinned(f func())
}
