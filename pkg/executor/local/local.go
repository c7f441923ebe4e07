// Package local is the in-process implementation of the executor seam:
// it runs an open model's forward passes on a compute backend (the CPU
// unless Options.Device names another, such as the CUDA runner's GPU)
// over a paged KV pool, and samples next to the logits.
package local

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/helexa/helexa/pkg/compute"
	"github.com/helexa/helexa/pkg/compute/cpu"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/models/arch"
	"github.com/helexa/helexa/pkg/models/modelfile"
	"github.com/helexa/helexa/pkg/sampling"
)

// RoutingHook observes MoE routing (debug and tests): while computing the
// token at position pos of sequence seq, layer layer chose experts (most
// probable first) with router probabilities probs (softmax over all
// experts, before renormalisation). The slices are reused after the call.
type RoutingHook func(seq executor.SeqID, pos, layer int, experts []int32, probs []float32)

// Options configure the local executor: the load options every executor
// takes, and what only an in-process executor can be given (hooks, a
// tensor-parallel reducer, a device backend). Zero values select the
// defaults.
type Options struct {
	executor.LoadOptions
	// Routing, when set, observes MoE expert choices.
	Routing RoutingHook
	// Rank and Size place the executor in a tensor-parallel group of Size
	// ranks (0 or 1: alone): it holds rank Rank's shard of the model and
	// sums partial results with the other ranks through Reducer.
	Rank, Size int
	Reducer    compute.Reducer
	// Device, when set, is the backend the model runs on instead of a new
	// CPU backend (the CUDA runner passes its GPU); the executor closes
	// it. Its KV pool is sized after the weights are prepared, from
	// Device.FreeMemory, unless NumBlocks or KVBudget say otherwise.
	Device Device
}

// Device is a compute backend other than the CPU that an executor can run
// on.
type Device interface {
	compute.Backend
	// Name is what Info.Processor shows (e.g. "CUDA:0 NVIDIA H100").
	Name() string
	// FreeMemory is the device memory still free, in bytes.
	FreeMemory() int64
	// WeightBytes is the device memory the prepared weights take (types
	// converted at load take more than in the file).
	WeightBytes() int64
}

// defaultSeqsPerPool is how many full-context sequences the default KV pool
// holds when Options.Parallel is 0.
const defaultSeqsPerPool = 4

// Executor runs a model in this process: on the CPU the weights stay
// mapped from the file and the KV pool lives in host memory; on a Device
// both live in its memory.
type Executor struct {
	file    *modelfile.Model
	owned   bool // Close closes file (Load opened it)
	model   *arch.Model
	be      compute.Backend
	kv      compute.KV
	win     compute.KV // the sliding-window store (nil: no windowed layers)
	opts    Options
	info    executor.Info
	seqs    map[executor.SeqID]*seqState
	snaps   map[uint64]*arch.State // recurrent state snapshots (Work.SaveState)
	nextID  executor.SeqID
	scratch arch.Scratch
	masked  []float32 // constrained logits (executor.Work.Allowed), reused
	// sampleBufs hold, per batch slot, the logits a step only samples
	// from (see logitsBuf), reused across steps.
	sampleBufs [][]float32
	closeMu    sync.Mutex
	closed     bool
}

var _ executor.Executor = (*Executor)(nil)

// Load opens a model (a GGUF file, or a Hugging Face directory with
// config.json and safetensors weights) and prepares it for CPU inference;
// the executor owns the open file.
func Load(ctx context.Context, path string, opts Options) (*Executor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := modelfile.Open(path)
	if err != nil {
		return nil, err
	}
	l, err := New(m, opts)
	if err != nil {
		m.Close()
		return nil, err
	}
	l.owned = true
	return l, nil
}

// New prepares an open model for CPU inference. The caller keeps ownership
// of m and closes it after the executor.
func New(m *modelfile.Model, opts Options) (*Executor, error) {
	model := m.Arch
	if opts.Size > 1 {
		if opts.Reducer == nil {
			return nil, fmt.Errorf("rank %d of %d without a reducer", opts.Rank, opts.Size)
		}
		var err error
		if model, err = m.Arch.Shard(opts.Rank, opts.Size); err != nil {
			return nil, err
		}
	}
	hp := &model.HP
	if err := fillDefaults(&opts, hp); err != nil {
		return nil, err
	}
	m.Arch.SetContext(opts.NumCtx) // the shards' layers share the whole model's RoPE
	be, err := prepareBackend(model, &opts)
	if err != nil {
		return nil, err
	}
	kv, win, err := newStores(be, hp, &opts)
	if err != nil {
		be.Close()
		return nil, err
	}
	l := &Executor{file: m, model: model, kv: kv, win: win, opts: opts, seqs: map[executor.SeqID]*seqState{}, snaps: map[uint64]*arch.State{},
		nextID: 1, be: be}
	l.info = executor.Info{Arch: model.Arch, NCtx: opts.NumCtx, NCtxTrain: hp.NCtxTrain, NVocab: hp.NVocab,
		BlockSize: opts.BlockSize, NumBlocks: opts.NumBlocks, BlockBytes: kv.BlockBytes(),
		Processor: processorName(&opts), WeightsBytes: weightsBytes(m, &opts, be), Recurrent: model.Recurrent(), StateBytes: model.StateBytes(),
		StateSnapshots: model.Recurrent()}
	if win != nil {
		l.info.Window, l.info.WinNumBlocks, l.info.WinBlockBytes = hp.Window, opts.WinBlocks, win.BlockBytes()
	}
	return l, nil
}

// prepareBackend makes the backend the model runs on (opts.Device, or a
// new CPU backend) and prepares the model's weights on it. On a device,
// the KV pool's default size follows the memory the weights left free.
func prepareBackend(model *arch.Model, opts *Options) (compute.Backend, error) {
	var be compute.Backend
	if opts.Device != nil {
		be = opts.Device
	} else {
		host := cpu.New(opts.Threads)
		if opts.Reducer != nil {
			host.SetReducer(opts.Reducer)
		}
		be = host
	}
	if err := model.Prepare(be); err != nil {
		be.Close()
		return nil, err
	}
	if opts.Device != nil && opts.NumBlocks == 0 {
		budget := opts.KVBudget
		if budget == 0 {
			// At least a byte: a device with no room left gets the
			// one-sequence pool, not the unbounded default.
			budget = max(deviceKVBudget(opts.Device.FreeMemory()), 1)
		}
		sizePool(opts, &model.HP, budget)
	}
	return be, nil
}

// deviceKVBudget is the part of a device's free memory (after the
// weights) the default KV pool may take: what the reserve leaves.
func deviceKVBudget(free int64) int64 { return max(free-compute.DeviceReserve(free), 0) }

// packingBackend is a backend that keeps load-time copies of some weights
// in a layout of its own (the CPU's packed weights).
type packingBackend interface {
	// PackedGrowth is the bytes those copies take beyond the file's.
	PackedGrowth() int64
}

// weightsBytes is the memory the weights take: the mapped file on the
// CPU, what the device holds on a device.
func weightsBytes(m *modelfile.Model, o *Options, be compute.Backend) int64 {
	if o.Device != nil {
		return o.Device.WeightBytes()
	}
	if p, ok := be.(packingBackend); ok {
		return m.FileSize() + p.PackedGrowth() // packed copies replace the file's pages
	}
	return m.FileSize()
}

func processorName(o *Options) string {
	if o.Device != nil {
		return o.Device.Name()
	}
	return "CPU"
}

// newStores allocates the full-context KV store and, for a model with
// windowed layers, the sliding-window store.
func newStores(be compute.Backend, hp *arch.HParams, o *Options) (kv, win compute.KV, err error) {
	shape := compute.KVShape{Layers: hp.KVLayers(), NumBlocks: o.NumBlocks, BlockSize: o.BlockSize, KVDim: hp.KVDim(), HeadDim: hp.HeadDim, F16: o.KVType == "f16"}
	if kv, err = be.NewKV(shape); err != nil {
		return nil, nil, err
	}
	if hp.NWinLayer == 0 {
		return kv, nil, nil
	}
	shape.Layers, shape.NumBlocks = hp.NWinLayer, o.WinBlocks
	if win, err = be.NewKV(shape); err != nil {
		return nil, nil, fmt.Errorf("sliding-window KV store: %w", err)
	}
	return kv, win, nil
}

// fillDefaults replaces the zero options with their defaults for a model
// with hyperparameters hp.
func fillDefaults(o *Options, hp *arch.HParams) error {
	if o.NumCtx < 0 || o.BlockSize < 0 || o.NumBlocks < 0 || o.ChunkSize < 0 || o.KVBudget < 0 || o.Parallel < 0 || o.WinBlocks < 0 {
		return fmt.Errorf("negative executor option in %+v", o.LoadOptions)
	}
	if o.TP > 1 {
		return fmt.Errorf("tp %d: a local executor holds one rank (a tensor-parallel load starts one per rank)", o.TP)
	}
	if err := CheckKVType(o.KVType); err != nil {
		return err
	}
	if o.KVType == "" {
		o.KVType = "f32"
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
	if hp.NWinLayer > 0 && o.WinBlocks == 0 {
		seqs := o.Parallel
		if seqs == 0 {
			seqs = defaultSeqsPerPool
		}
		o.WinBlocks = seqs * executor.WindowBlocks(hp.Window, o.ChunkSize, o.NumCtx, o.BlockSize)
	}
	if o.NumBlocks == 0 && o.Device == nil {
		budget := o.KVBudget
		if budget == 0 {
			budget = availableMemory() / 2
		}
		sizePool(o, hp, budget)
	}
	return nil
}

// sizePool sets the default NumBlocks: Parallel sequences of NumCtx,
// reduced to what budget bytes hold beside the window store (never below
// one sequence).
func sizePool(o *Options, hp *arch.HParams, budget int64) {
	seqs := o.Parallel
	if seqs == 0 {
		seqs = defaultSeqsPerPool
	}
	shape := compute.KVShape{Layers: hp.KVLayers(), BlockSize: o.BlockSize, KVDim: hp.KVDim(), HeadDim: hp.HeadDim, F16: o.KVType == "f16"}
	if hp.NWinLayer > 0 {
		win := shape
		win.Layers = hp.NWinLayer
		budget -= int64(o.WinBlocks) * win.BlockBytesOf()
	}
	perSeq := (o.NumCtx + o.BlockSize - 1) / o.BlockSize
	o.NumBlocks = seqs * perSeq
	if blockBytes := shape.BlockBytesOf(); blockBytes > 0 {
		if fit := budget / blockBytes; budget > 0 && fit < int64(o.NumBlocks) {
			o.NumBlocks = max(perSeq, int(fit))
		}
	}
}

// CheckKVType reports whether t names a KV cache element type: "f32",
// "f16", or "" (the default, f32).
func CheckKVType(t string) error {
	switch t {
	case "", "f32", "f16":
		return nil
	}
	return fmt.Errorf("KV cache type %q: want f32 or f16", t)
}

// Model returns the loaded architecture (hyperparameters for debug output).
func (l *Executor) Model() *arch.Model { return l.model }

// Info implements Executor.
func (l *Executor) Info() executor.Info { return l.info }

// Memory implements Executor.
func (l *Executor) Memory() executor.MemoryInfo {
	states := int64(0)
	for _, st := range l.seqs {
		if st.rec != nil {
			states += l.info.StateBytes
		}
	}
	kv := l.kv.Bytes()
	if l.win != nil {
		kv += l.win.Bytes()
	}
	free := availableMemory()
	if l.opts.Device != nil {
		free = l.opts.Device.FreeMemory()
	}
	return executor.MemoryInfo{WeightsBytes: weightsBytes(l.file, &l.opts, l.be), KVBytes: kv + states + l.snapshotBytes(), FreeBytes: free}
}

// NewSeq implements Executor.
func (l *Executor) NewSeq(p sampling.Params) (executor.SeqID, error) {
	if l.closed {
		return 0, errClosed
	}
	smp := sampling.New(p, l.model.HP.NVocab)
	if err := smp.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", executor.ErrBadRequest, err)
	}
	st := &seqState{sampler: smp}
	if l.model.Recurrent() {
		rec, err := l.model.NewState(l.be)
		if err != nil {
			return 0, err
		}
		st.rec = rec
	}
	id := l.nextID
	l.nextID++
	l.seqs[id] = st
	return id, nil
}

// FreeSeq implements Executor.
func (l *Executor) FreeSeq(id executor.SeqID) {
	if st := l.seqs[id]; st != nil && st.rec != nil {
		st.rec.Free(l.be)
	}
	delete(l.seqs, id)
}

var errClosed = executor.ErrClosed

// Close implements Executor.
func (l *Executor) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.scratch.Free(l.be)
	l.be.Close()
	l.seqs = nil
	if l.owned {
		return l.file.Close()
	}
	return nil
}
