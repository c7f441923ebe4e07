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

// Reducer sums host buffers element-wise across the ranks of a
// tensor-parallel group (a ring over sockets between rank processes). Every
// rank must call AllReduce the same number of times with buffers of the same
// length; afterwards every rank holds the same bits.
type Reducer interface {
	AllReduce(data []float32) error
}
