package executor

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/sampling"
)

// RoutingHook observes MoE routing (debug and tests): while computing the
// token at position pos of sequence seq, layer layer chose experts (most
// probable first) with router probabilities probs (softmax over all
// experts, before renormalisation). The slices are reused after the call.
type RoutingHook func(seq SeqID, pos, layer int, experts []int32, probs []float32)

// LocalOptions configure LoadLocal. Zero values select the defaults.
type LocalOptions struct {
	// NumCtx is the context length the KV pool is sized for (default
	// min(4096, the model's training context)).
	NumCtx int
	// BlockSize is the number of positions per KV block (default 16).
	BlockSize int
	// NumBlocks is the size of the KV pool (default: four sequences of
	// NumCtx, reduced to fit KVBudget but never below one sequence).
	NumBlocks int
	// KVBudget bounds the default NumBlocks in bytes (default: half of the
	// host's available memory).
	KVBudget int64
	// Threads is the number of CPU workers (default: all cores).
	Threads int
	// ChunkSize is the most tokens one forward pass runs; longer prefills
	// are split (default 512).
	ChunkSize int
	// Routing, when set, observes MoE expert choices.
	Routing RoutingHook
}

// defaultSeqsPerPool is how many full-context sequences the default KV pool
// holds.
const defaultSeqsPerPool = 4

// Local is the in-process CPU Executor: the model's weights stay mapped
// from the GGUF file, the KV pool is F32 in host memory.
type Local struct {
	file    weightsFile
	model   *arch.Model
	be      *compute.CPU
	kv      *compute.KVCache
	opts    LocalOptions
	info    Info
	seqs    map[SeqID]*seqState
	nextID  SeqID
	scratch arch.Scratch
	masked  []float32 // constrained logits (Work.Allowed), reused
	// sampleBufs hold, per batch slot, the logits a step only samples
	// from (see logitsBuf), reused across steps.
	sampleBufs [][]float32
	closeMu    sync.Mutex
	closed     bool
}

var _ Executor = (*Local)(nil)

// LoadLocal opens a model (a GGUF file, or a Hugging Face directory with
// config.json and safetensors weights) and prepares it for CPU inference.
func LoadLocal(ctx context.Context, path string, opts LocalOptions) (*Local, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, m, err := openModel(path)
	if err != nil {
		return nil, err
	}
	if err := fillDefaults(&opts, &m.HP); err != nil {
		f.Close()
		return nil, err
	}
	kv, err := compute.NewKVCache(m.HP.NLayer, opts.NumBlocks, opts.BlockSize, m.HP.KVDim())
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &Local{file: f, model: m, kv: kv, opts: opts, seqs: map[SeqID]*seqState{}, nextID: 1,
		be: compute.NewCPU(opts.Threads)}
	l.info = Info{Arch: m.Arch, NCtx: opts.NumCtx, NCtxTrain: m.HP.NCtxTrain, NVocab: m.HP.NVocab,
		BlockSize: opts.BlockSize, NumBlocks: opts.NumBlocks, BlockBytes: kv.BlockBytes(),
		Processor: "CPU", WeightsBytes: f.FileSize()}
	return l, nil
}

func fillDefaults(o *LocalOptions, hp *arch.HParams) error {
	if o.NumCtx < 0 || o.BlockSize < 0 || o.NumBlocks < 0 || o.ChunkSize < 0 || o.KVBudget < 0 {
		return fmt.Errorf("negative executor option in %+v", *o)
	}
	if o.NumCtx == 0 {
		o.NumCtx = min(4096, hp.NCtxTrain)
	}
	if o.BlockSize == 0 {
		o.BlockSize = 16
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = 512
	}
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	perSeq := (o.NumCtx + o.BlockSize - 1) / o.BlockSize
	if o.NumBlocks == 0 {
		budget := o.KVBudget
		if budget == 0 {
			budget = availableMemory() / 2
		}
		blockBytes := int64(hp.NLayer) * 2 * int64(o.BlockSize*hp.KVDim()) * 4
		o.NumBlocks = defaultSeqsPerPool * perSeq
		if fit := budget / blockBytes; budget > 0 && fit < int64(o.NumBlocks) {
			o.NumBlocks = max(perSeq, int(fit))
		}
	}
	return nil
}

// Model returns the loaded architecture (hyperparameters for debug output).
func (l *Local) Model() *arch.Model { return l.model }

// Info implements Executor.
func (l *Local) Info() Info { return l.info }

// Memory implements Executor.
func (l *Local) Memory() MemoryInfo {
	return MemoryInfo{WeightsBytes: l.file.FileSize(), KVBytes: l.kv.Bytes(), FreeBytes: availableMemory()}
}

// NewSeq implements Executor.
func (l *Local) NewSeq(p sampling.Params) (SeqID, error) {
	if l.closed {
		return 0, errClosed
	}
	smp := sampling.New(p, l.model.HP.NVocab)
	if err := smp.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	id := l.nextID
	l.nextID++
	l.seqs[id] = &seqState{sampler: smp}
	return id, nil
}

// FreeSeq implements Executor.
func (l *Local) FreeSeq(id SeqID) { delete(l.seqs, id) }

var errClosed = ErrClosed

// Close implements Executor.
func (l *Local) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.be.Close()
	l.seqs = nil
	return l.file.Close()
}
