package cuda

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute"
)

// Backend is the compute.Backend of one GPU. Like every backend it is
// driven by one goroutine at a time; its device calls run on the device's
// owner goroutine.
type Backend struct {
	d       driver
	writes  *writeCounter // d, counting its writes
	fault   string        // tests only: see faultEnv
	weights map[*compute.Weight]*devWeight
	sorted  []*devWeight        // by host address, for expert matrices (Weight.Mat)
	wbytes  int64               // device bytes of the prepared weights and vectors
	factors map[*float32]devPtr // RoPE frequency factors by host slice
	// staging buffers for host arrays and F16 operands, grown as needed
	ints [4]devBuf
	sent [4][]int32 // what each ints buffer holds (a pass sends the same positions to every layer)
	f16x devBuf     // activations converted to F16 for a GEMM
	f32w devBuf     // rows of a weight dequantized to F32 for a GEMM
	// route holds MoERoute's host copies of router logits and
	// probabilities, reused across layers and steps
	route []float32
	// attnPart holds split decode attention's partial results, attnCount
	// its count of finished splits per (row, head)
	attnPart, attnCount devBuf
	// argmax holds ArgMaxRows's keys on the device, argmaxKeys on the
	// host (reused across steps)
	argmax     devBuf
	argmaxKeys []uint64
	// rounded holds activations rounded as the CPU quantizes them, by
	// rounding kernel (roundedInput)
	rounded map[string]*devBuf
	// norm is what the last norm (RMSNorm, AddRMSNorm) left for the
	// products that follow it: its output, that output rounded in the same
	// launch, and the rounding those products asked for last
	norm   preRounded
	plans  planCache
	closed bool
}

var (
	_ compute.Backend       = (*Backend)(nil)
	_ compute.PinnedBackend = (*Backend)(nil)
)

// newBackend is the backend over an open driver.
func newBackend(d driver) *Backend {
	w := &writeCounter{driver: d}
	return &Backend{d: w, writes: w, fault: os.Getenv(faultEnv), weights: map[*compute.Weight]*devWeight{},
		factors: map[*float32]devPtr{}, rounded: map[string]*devBuf{}}
}

// faultEnv is envvars.CUDAFault's name (pkg/compute/cuda does not import the
// CLI's declarations; the envvars test finds the name here).
const faultEnv = "HELEXA_CUDA_FAULT"

// Info describes the backend's GPU as it was when the backend opened.
func (b *Backend) Info() Info { return b.d.info() }

// Name is what `helexa ps` shows as the model's processor.
func (b *Backend) Name() string {
	i := b.d.info()
	return fmt.Sprintf("CUDA:%d %s", i.Index, i.Name)
}

// FreeMemory is the GPU's free memory now (0 after a device failure).
func (b *Backend) FreeMemory() int64 {
	var free int64
	if err := b.d.do(func() (err error) { free, _, err = b.d.memInfo(); return err }); err != nil {
		return 0
	}
	return free
}

// WeightBytes is the device memory the prepared weights and vectors take.
func (b *Backend) WeightBytes() int64 { return b.wbytes }

// HasCublas reports whether GEMMs run on cuBLAS (else on matvec kernels).
func (b *Backend) HasCublas() bool { return b.d.gemmer() != nil }

// Pinned implements compute.PinnedBackend: the executor runs each step on
// the device's owner goroutine, so that its hundreds of launches are plain
// calls rather than hand-offs between threads.
func (b *Backend) Pinned(f func()) { b.d.pinned(f) }

// must runs f on the device and panics with its failure: the operations
// of compute.Backend without an error result report device failures so.
func (b *Backend) must(f func() error) {
	if err := b.d.do(f); err != nil {
		panic(err)
	}
}

// devBuf is a device buffer that grows to the largest size asked of it.
type devBuf struct {
	p   devPtr
	cap int64
}

// ensure returns a buffer of at least n bytes (on the owner goroutine).
func (buf *devBuf) ensure(d driver, n int64) (devPtr, error) {
	if n <= buf.cap && buf.p != 0 {
		return buf.p, nil
	}
	if buf.p != 0 {
		d.free(buf.p)
		buf.p, buf.cap = 0, 0
	}
	p, err := d.alloc(n)
	if err != nil {
		return 0, err
	}
	buf.p, buf.cap = p, n
	return p, nil
}

// putInts copies vals into staging buffer i and returns its address (0
// for an empty slice).
func (b *Backend) putInts(i int, vals []int32) (devPtr, error) {
	if len(vals) == 0 {
		return 0, nil
	}
	if slices.Equal(b.sent[i], vals) && b.ints[i].p != 0 {
		return b.ints[i].p, nil
	}
	n := int64(len(vals)) * 4
	p, err := b.ints[i].ensure(b.d, n)
	if err != nil {
		return 0, err
	}
	b.sent[i] = b.sent[i][:0] // unknown until the upload succeeds
	if err := b.d.upload(p, unsafe.Pointer(&vals[0]), n); err != nil {
		return 0, err
	}
	b.sent[i] = append(b.sent[i][:0], vals...)
	return p, nil
}

// putFloats is putInts for float32 values.
func (b *Backend) putFloats(i int, vals []float32) (devPtr, error) {
	if len(vals) == 0 {
		return 0, nil
	}
	return b.putInts(i, unsafe.Slice((*int32)(unsafe.Pointer(&vals[0])), len(vals)))
}

// tensor is a device tensor: rows × cols F32 values at p, inside mem.
type tensor struct {
	p          devPtr
	rows, cols int
	mem        *allocation
}

// allocation is one cuMemAlloc shared by a tensor and its views.
type allocation struct {
	p      devPtr
	values int
	freed  bool
}

func (t *tensor) Rows() int { return t.rows }
func (t *tensor) Cols() int { return t.cols }

// dev returns the device tensor behind t.
func dev(t compute.Tensor) *tensor {
	d, ok := t.(*tensor)
	if !ok {
		panic(fmt.Sprintf("cuda: tensor %T does not belong to the CUDA backend", t))
	}
	return d
}

// row is the address of row r.
func (t *tensor) row(r int) devPtr { return t.p + devPtr(r*t.cols*4) }

// NewTensor implements compute.Backend.
func (b *Backend) NewTensor(rows, cols int) (compute.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("tensor of %d × %d", rows, cols)
	}
	var p devPtr
	if err := b.d.do(func() (err error) { p, err = b.d.alloc(int64(rows) * int64(cols) * 4); return err }); err != nil {
		return nil, err
	}
	return &tensor{p: p, rows: rows, cols: cols, mem: &allocation{p: p, values: rows * cols}}, nil
}

// View implements compute.Backend.
func (b *Backend) View(t compute.Tensor, rows, cols int) compute.Tensor {
	d := dev(t)
	if rows < 0 || cols < 0 || rows*cols > d.mem.values-int(d.p-d.mem.p)/4 {
		panic(fmt.Sprintf("cuda: view %d × %d of a tensor of %d values", rows, cols, d.mem.values))
	}
	return &tensor{p: d.p, rows: rows, cols: cols, mem: d.mem}
}

// Free implements compute.Backend.
func (b *Backend) Free(t compute.Tensor) {
	d := dev(t)
	if d.mem.freed || b.closed {
		return
	}
	d.mem.freed = true
	b.d.do(func() error { b.d.free(d.mem.p); return nil })
}

// Write implements compute.Backend.
func (b *Backend) Write(t compute.Tensor, src []float32) error {
	d := dev(t)
	if len(src) != d.rows*d.cols {
		return fmt.Errorf("write of %d values into a %d × %d tensor", len(src), d.rows, d.cols)
	}
	if len(src) == 0 {
		return nil
	}
	return b.d.do(func() error { return b.d.upload(d.p, unsafe.Pointer(&src[0]), int64(len(src))*4) })
}

// ReadRow implements compute.Backend.
func (b *Backend) ReadRow(t compute.Tensor, r int, dst []float32) error {
	d := dev(t)
	if r < 0 || r >= d.rows || len(dst) < d.cols {
		return fmt.Errorf("read of row %d (%d values) from a %d × %d tensor", r, len(dst), d.rows, d.cols)
	}
	if d.cols == 0 {
		return nil
	}
	return b.d.do(func() error {
		if err := b.d.download(unsafe.Pointer(&dst[0]), d.row(r), int64(d.cols)*4); err != nil {
			return fmt.Errorf("copying row %d to the host: %w", r, err)
		}
		return nil
	})
}

// devWeight is a prepared weight: its bytes on the device in format f.
type devWeight struct {
	w     *compute.Weight
	p     devPtr
	f     format
	start uintptr // host address of w.Data
}

// Prepare implements compute.Backend: the weight's bytes go to the
// device, as they are for the types with kernels of their own, as F16
// for the others.
func (b *Backend) Prepare(w *compute.Weight) error {
	if _, ok := b.weights[w]; ok || len(w.Data) == 0 {
		return nil
	}
	f := deviceFormat(w.Type)
	src, n := unsafe.Pointer(&w.Data[0]), int64(len(w.Data))
	if !f.native {
		h, err := hostF16(w)
		if err != nil {
			return err
		}
		src, n = unsafe.Pointer(&h[0]), int64(len(h))*2
	}
	var p devPtr
	err := b.d.do(func() (err error) {
		if p, err = b.d.alloc(n); err != nil {
			return err
		}
		return b.d.upload(p, src, n)
	})
	if err != nil {
		return fmt.Errorf("uploading %s (%d bytes): %w", w.Name, n, err)
	}
	b.wbytes += n
	dw := &devWeight{w: w, p: p, f: f, start: uintptr(unsafe.Pointer(&w.Data[0]))}
	b.weights[w] = dw
	i := sort.Search(len(b.sorted), func(i int) bool { return b.sorted[i].start > dw.start })
	b.sorted = append(b.sorted[:i], append([]*devWeight{dw}, b.sorted[i:]...)...)
	return nil
}

// lookup finds w's device copy: w itself was prepared, or w is one
// matrix of a prepared stack (Weight.Mat shares the stack's bytes).
func (b *Backend) lookup(w *compute.Weight) (devPtr, format, error) {
	if dw, ok := b.weights[w]; ok {
		return dw.p, dw.f, nil
	}
	if len(w.Data) == 0 {
		return 0, format{}, fmt.Errorf("weight %s has no data", w.Name)
	}
	addr := uintptr(unsafe.Pointer(&w.Data[0]))
	i := sort.Search(len(b.sorted), func(i int) bool { return b.sorted[i].start > addr }) - 1
	if i < 0 {
		return 0, format{}, fmt.Errorf("weight %s was not prepared on the GPU", w.Name)
	}
	dw := b.sorted[i]
	off := addr - dw.start
	if off+uintptr(len(w.Data)) > uintptr(len(dw.w.Data)) || dw.w.Type != w.Type || dw.w.Cols() != w.Cols() {
		return 0, format{}, fmt.Errorf("weight %s was not prepared on the GPU", w.Name)
	}
	if !dw.f.native { // F16 rows of Cols values
		off = off / uintptr(w.RowBytes()) * uintptr(w.Cols()) * 2
	}
	return dw.p + devPtr(off), dw.f, nil
}

// PrepareVector implements compute.Backend.
func (b *Backend) PrepareVector(v *compute.Vector) error {
	if v.Dev != nil || len(v.Data) == 0 {
		return nil
	}
	var p devPtr
	n := int64(len(v.Data)) * 4
	if err := b.d.do(func() (err error) {
		if p, err = b.d.alloc(n); err != nil {
			return err
		}
		return b.d.upload(p, unsafe.Pointer(&v.Data[0]), n)
	}); err != nil {
		return fmt.Errorf("uploading %s: %w", v.Name, err)
	}
	v.Dev = p
	b.wbytes += n
	return nil
}

// vec is a prepared vector's device address.
func vec(v *compute.Vector) devPtr {
	p, ok := v.Dev.(devPtr)
	if !ok {
		panic(fmt.Sprintf("cuda: vector %s was not prepared on the GPU", v.Name))
	}
	return p
}

// kvStore is a paged KV store in device memory: per layer, keys and
// values of NumBlocks·BlockSize positions × KVDim.
type kvStore struct {
	compute.KVShape
	k, v []devPtr
}

func (s *kvStore) Shape() compute.KVShape { return s.KVShape }
func (s *kvStore) BlockBytes() int64      { return s.BlockBytesOf() }
func (s *kvStore) Bytes() int64           { return s.BlockBytesOf() * int64(s.NumBlocks) }

// NewKV implements compute.Backend.
func (b *Backend) NewKV(s compute.KVShape) (compute.KV, error) {
	if s.Layers < 0 || s.NumBlocks <= 0 || s.BlockSize <= 0 || s.KVDim <= 0 {
		return nil, fmt.Errorf("kv cache: bad shape %+v", s)
	}
	elem := int64(4)
	if s.F16 {
		elem = 2
	}
	layer := int64(s.NumBlocks) * int64(s.BlockSize) * int64(s.KVDim) * elem
	st := &kvStore{KVShape: s}
	err := b.d.do(func() error {
		for range s.Layers {
			k, err := b.d.alloc(layer)
			if err != nil {
				return err
			}
			st.k = append(st.k, k)
			v, err := b.d.alloc(layer)
			if err != nil {
				return err
			}
			st.v = append(st.v, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("KV store of %d bytes: %w", st.Bytes(), err)
	}
	return st, nil
}

// suffix names the store's element type in its kernels' names.
func (s *kvStore) suffix() string {
	if s.F16 {
		return "f16"
	}
	return "f32"
}

func kvOf(kv compute.KV) *kvStore {
	s, ok := kv.(*kvStore)
	if !ok {
		panic(fmt.Sprintf("cuda: KV store %T does not belong to the CUDA backend", kv))
	}
	return s
}

// AllReduce implements compute.Backend: one GPU is one rank.
func (b *Backend) AllReduce(compute.Tensor) error { return nil }

// Close implements compute.Backend: the context goes with every
// allocation in it.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.d.close()
	return nil
}
