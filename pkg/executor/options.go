package executor

// LoadOptions say how an executor loads a model: the context and KV pool
// it is sized for, and the compute it runs with. They are built once per
// load (by the model loader) and cross the runner RPC unchanged, inside
// the load request, so that a runner process, a tensor-parallel rank and
// an in-process executor read the same fields. Zero values take the
// executor's defaults.
type LoadOptions struct {
	// NumCtx is the context length the KV pool is sized for (default
	// min(4096, the model's training context)).
	NumCtx int `json:"num_ctx,omitempty"`
	// BlockSize is the number of positions per KV block (default 16).
	BlockSize int `json:"block_size,omitempty"`
	// NumBlocks is the size of the KV pool (default: Parallel sequences of
	// NumCtx, reduced to fit KVBudget but never below one sequence).
	NumBlocks int `json:"num_blocks,omitempty"`
	// WinBlocks is the size of the sliding-window store of a model with
	// windowed layers (default: Parallel sequences' windows, each the
	// blocks a window plus one ChunkSize pass reaches).
	WinBlocks int `json:"win_blocks,omitempty"`
	// Parallel is how many full-context sequences the default pool holds
	// (default 4; serve passes HELEXA_NUM_PARALLEL).
	Parallel int `json:"parallel,omitempty"`
	// KVBudget bounds the default NumBlocks in bytes (default: half of the
	// host's available memory on the CPU, what the weights leave of a
	// device's free memory less its reserve on a device).
	KVBudget int64 `json:"kv_budget,omitempty"`
	// Threads is the number of CPU workers of the whole load (default: all
	// cores); a tensor-parallel load shares them out among its ranks.
	Threads int `json:"threads,omitempty"`
	// ChunkSize is the most tokens one forward pass runs; longer prefills
	// are split (default 512).
	ChunkSize int `json:"chunk_size,omitempty"`
	// KVType is the KV cache's element type: "f32" (the default) or "f16"
	// (half the memory).
	KVType string `json:"kv_type,omitempty"`
	// TP, above 1, splits the model over that many tensor-parallel ranks
	// (0 or 1: one rank). Only a loader that starts ranks honours it: a
	// single executor holds one rank and refuses it.
	TP int `json:"tp,omitempty"`
}
