// Package executor defines the seam between the scheduler and whatever owns a
// loaded model's weights and KV storage (the Executor interface and its
// request/response types, the load options every executor takes). The
// implementations live in the subpackages: local (in-process), rpc (a
// runner process) and tp (tensor-parallel ranks).
//
// KV storage is paged: the executor owns a pool of NumBlocks blocks of
// BlockSize positions each; the caller (the scheduler) owns the block tables
// and passes a sequence's table with every step. Position p of a sequence
// lives in Blocks[p/BlockSize] at slot p%BlockSize. Blocks may be shared by
// several sequences (a common prefix) as long as nobody writes to them again.
// A model with sliding-window layers has a second, smaller pool for them
// (Info.Window, Work.WinBlocks) whose blocks the caller frees once they fall
// out of the window.
package executor

import (
	"context"

	"github.com/helexa/helexa/pkg/sampling"
)

// SeqID names a sequence inside one executor.
type SeqID uint64

// Executor runs one loaded model. Implementations are not required to be
// safe for concurrent use: one goroutine (the model's scheduler) drives it.
type Executor interface {
	// Info describes the loaded model and its KV pool.
	Info() Info
	// NewSeq allocates sampler state for a new sequence.
	NewSeq(p sampling.Params) (SeqID, error)
	// FreeSeq releases a sequence's sampler state (its KV blocks belong to
	// the caller's block tables).
	FreeSeq(id SeqID)
	// Step runs one forward pass over a batch. A returned error means the
	// executor itself failed (device error, dead worker): the model must be
	// considered poisoned. Errors that belong to a single sequence are
	// reported in that sequence's Result.Err instead.
	Step(ctx context.Context, batch []Work) ([]Result, error)
	// Memory reports memory use and what is still free.
	Memory() MemoryInfo
	// Close releases the weights and KV storage.
	Close() error
}

// LogitsMode selects which raw logits a step returns (debug and tests;
// remote executors may refuse All).
type LogitsMode int

// Logits modes.
const (
	LogitsNone LogitsMode = iota // only the sampled token
	LogitsLast                   // the vocab-sized vector after the last token
	LogitsAll                    // one vector per input token
)

// Work is one sequence's share of a step.
type Work struct {
	Seq SeqID
	// Tokens are the new tokens; Tokens[i] sits at position Pos+i.
	Tokens []int32
	Pos    int
	// Blocks is the sequence's block table; it must cover positions
	// [0, Pos+len(Tokens)). KV for [0, Pos) must already be present.
	Blocks []int32
	// WinBlocks is the sequence's block table in the sliding-window store
	// of a model with windowed layers (Info.Window > 0), indexed like
	// Blocks: the entries for the blocks holding positions
	// [max(0, Pos-Window+1), Pos+len(Tokens)) must name window blocks,
	// and the window's KV before Pos must be present; earlier entries are
	// never read (the caller frees those blocks and may mark them -1).
	WinBlocks []int32
	// LoadState, for a model with recurrent layers and Info.StateSnapshots,
	// restores the sequence's recurrent state from the snapshot saved under
	// that key (nonzero) before the work runs; the snapshot must be at Pos.
	// SaveState saves the state after the work under that key (replacing
	// a snapshot of the same key). DropStates frees snapshots before the
	// step's works run (none of them may restore one of those). Snapshots
	// belong to the executor, not to a sequence, so a later sequence with
	// the same prefix resumes from them.
	LoadState, SaveState uint64
	DropStates           []uint64
	// History are tokens before Pos that this executor never saw for this
	// sequence (a reused cached prefix); the sampler counts them for
	// repetition penalties. Only needed on a sequence's first step.
	History []int32
	// Sample asks for a token to be sampled after the last input token.
	Sample bool
	// SkipLogprob says the caller does not need Result.Logprob (it is then
	// 0): sampling skips a log-sum-exp over the whole vocabulary. The token
	// drawn is the same either way; TopLogprobs is unaffected.
	SkipLogprob bool
	// TopLogprobs > 0 returns that many most likely tokens with logprobs.
	TopLogprobs int
	Logits      LogitsMode
	// Allowed, when non-nil, constrains sampling (JSON mode): only token
	// ids whose bit is set (bit id%64 of Allowed[id/64]) may be sampled;
	// every other token is treated as having probability 0 (logit -inf)
	// before penalties, top-k/top-p and the draw. Logprobs (Result.Logprob
	// and Result.Top) stay on the raw, unconstrained logits: the mask
	// changes which token is drawn, not the probabilities reported. Only
	// meaningful with Sample. It must hold exactly (NVocab+63)/64 words
	// and allow at least one token, or the sequence fails with
	// ErrBadRequest.
	Allowed []uint64
	// Embed asks for the pooled final hidden state of the sequence's
	// tokens (embeddings): EmbedMean averages every token this work and
	// the sequence's earlier Embed works fed, EmbedLast takes the last
	// token's. The vector comes back in Result.Embedding, normalised to
	// unit length, on the work with EmbedFinal set.
	Embed      EmbedMode
	EmbedFinal bool
}

// EmbedMode selects how token hidden states are pooled into one embedding.
type EmbedMode int

// Embedding pooling modes.
const (
	EmbedNone EmbedMode = iota
	EmbedMean
	EmbedLast
)

// TokenLogprob is a token id with its log-probability.
type TokenLogprob struct {
	Token   int32   `json:"token"`
	Logprob float32 `json:"logprob"`
}

// Result is one sequence's outcome of a step, in the order of the batch.
type Result struct {
	Seq     SeqID
	Token   int32          // sampled token (when Work.Sample)
	Logprob float32        // log-probability of Token
	Top     []TokenLogprob // when Work.TopLogprobs > 0
	Logits  [][]float32    // per Work.Logits
	// Embedding is the pooled, unit-length hidden state (Work.Embed with
	// EmbedFinal).
	Embedding []float32
	// Err is an error that is this sequence's own (bad input, a panic in
	// its sampler), as a kind and a message. It never poisons the model.
	Err *Error
}

// Info describes a loaded model.
type Info struct {
	Arch         string `json:"arch"`
	NCtx         int    `json:"n_ctx"`       // context length the KV pool was sized for
	NCtxTrain    int    `json:"n_ctx_train"` // context length the model was trained with
	NVocab       int    `json:"n_vocab"`
	BlockSize    int    `json:"block_size"`
	NumBlocks    int    `json:"num_blocks"`
	BlockBytes   int64  `json:"block_bytes"` // KV bytes per block (all layers)
	Processor    string `json:"processor"`   // "CPU", "GPU", "TP×N"
	WeightsBytes int64  `json:"weights_bytes"`
	// Window > 0 says the model has sliding-window layers that see only
	// the last Window positions. Their KV lives in a store of its own,
	// WinNumBlocks blocks of BlockSize positions (WinBlockBytes each),
	// addressed by Work.WinBlocks: a sequence needs only the blocks its
	// window still reaches, so the caller frees the rest as it advances.
	Window        int   `json:"window,omitempty"`
	WinNumBlocks  int   `json:"win_num_blocks,omitempty"`
	WinBlockBytes int64 `json:"win_block_bytes,omitempty"`
	// Recurrent says the model has recurrent layers: each sequence carries
	// a state that holds its whole history (StateBytes each), so a cached
	// prefix cannot be reused and a sequence only moves forward.
	Recurrent  bool  `json:"recurrent,omitempty"`
	StateBytes int64 `json:"state_bytes,omitempty"`
	// StateSnapshots says the executor keeps recurrent state snapshots
	// (Work.SaveState, LoadState, DropStates; StateBytes each), so that a
	// sequence can resume where a snapshot of its prefix was taken.
	StateSnapshots bool `json:"state_snapshots,omitempty"`
	// Ranks lists the processes of a tensor-parallel model (nil otherwise).
	Ranks []RankInfo `json:"ranks,omitempty"`
}

// WindowBlocks is the most sliding-window store blocks one sequence needs
// at once when a step feeds it at most chunk tokens: the blocks holding the
// window-1 positions before the step and the step's own (one more when
// they straddle a block boundary), never more than a whole context of
// numCtx positions.
func WindowBlocks(window, chunk, numCtx, blockSize int) int {
	return min((numCtx+blockSize-1)/blockSize, (window-1+chunk+blockSize-1)/blockSize+1)
}

// RankInfo is one rank of a tensor-parallel model.
type RankInfo struct {
	Rank   int    `json:"rank"`
	Device string `json:"device"` // "cpu"
	PID    int    `json:"pid"`
}

// MemoryInfo is a memory snapshot.
type MemoryInfo struct {
	WeightsBytes int64 `json:"weights_bytes"`
	KVBytes      int64 `json:"kv_bytes"`
	// FreeBytes is memory still available to the process for new models
	// (host RAM on CPU, device memory on GPU).
	FreeBytes int64 `json:"free_bytes"`
}
