package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync"
	"unsafe"

	"github.com/helexa/helexa/pkg/compute/cuda/emu"
	"github.com/helexa/helexa/pkg/compute/quant"
)

// OpenEmulated is a backend whose GPU is the CPU emulator of the kernels
// (pkg/compute/cuda/emu) with total bytes of "device" memory (a cap on what it may
// allocate, taken from the host only as it is used; a load keeps 512 MiB
// of it free, as on a GPU): the same backend
// code, kernels and launch parameters as on a GPU, its repeated runs of
// launches replayed as graphs (graphDriver) as there, so that tests run
// whole models through them on any machine. Every allocation ends at an
// inaccessible page, so a kernel that reads or writes past a buffer
// crashes the test instead of passing by luck. Slow; for tests.
func OpenEmulated(total int64) *Backend {
	return newBackend(withGraphs(&emuDriver{total: total, inf: Info{Name: "emulated", Major: 9, TotalBytes: total}}))
}

// emuDriver is the driver of OpenEmulated.
type emuDriver struct {
	mu     sync.Mutex
	mems   []*emu.Mem // by address
	used   int64
	total  int64
	inf    Info
	err    error
	closed bool
}

var _ driver = (*emuDriver)(nil)

func (d *emuDriver) do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if d.err != nil {
		return d.err
	}
	if err := f(); err != nil {
		d.err = fmt.Errorf("emulated CUDA device: %w", err)
		return d.err
	}
	return nil
}

// pinned runs f in place: the emulator has no thread of its own (do locks
// its mutex per call).
func (d *emuDriver) pinned(f func()) { f() }

func (d *emuDriver) alloc(n int64) (devPtr, error) {
	if d.used+n > d.total {
		return 0, fmt.Errorf("allocating %d bytes: out of memory (%d of %d used)", n, d.used, d.total)
	}
	m, err := emu.Alloc(int(max(n, 1)))
	if err != nil {
		return 0, fmt.Errorf("allocating %d bytes: %w", n, err)
	}
	d.used += int64(m.Len())
	i := sort.Search(len(d.mems), func(i int) bool { return d.mems[i].Addr() > m.Addr() })
	d.mems = append(d.mems[:i], append([]*emu.Mem{m}, d.mems[i:]...)...)
	return devPtr(m.Addr()), nil
}

// find returns the allocation holding [p, p+n) and p's offset in it.
func (d *emuDriver) find(p devPtr, n int64) (*emu.Mem, int, error) {
	i := sort.Search(len(d.mems), func(i int) bool { return d.mems[i].Addr() > uintptr(p) }) - 1
	if i < 0 {
		return nil, 0, fmt.Errorf("address %#x is not device memory", uintptr(p))
	}
	m := d.mems[i]
	off := int(uintptr(p) - m.Addr())
	if int64(off)+n > int64(m.Len()) {
		return nil, 0, fmt.Errorf("%d bytes at %#x run past an allocation of %d", n, uintptr(p), m.Len())
	}
	return m, off, nil
}

func (d *emuDriver) free(p devPtr) {
	for i, m := range d.mems {
		if m.Addr() == uintptr(p) {
			d.used -= int64(m.Len())
			m.Free()
			d.mems = append(d.mems[:i], d.mems[i+1:]...)
			return
		}
	}
}

func (d *emuDriver) upload(dst devPtr, src unsafe.Pointer, n int64) error {
	m, off, err := d.find(dst, n)
	if err != nil {
		return err
	}
	copy(m.Bytes()[off:off+int(n)], unsafe.Slice((*byte)(src), n))
	return nil
}

func (d *emuDriver) download(dst unsafe.Pointer, src devPtr, n int64) error {
	m, off, err := d.find(src, n)
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(dst), n), m.Bytes()[off:off+int(n)])
	return nil
}

func (d *emuDriver) copyD(dst, src devPtr, n int64) error {
	dm, do, err := d.find(dst, n)
	if err != nil {
		return err
	}
	sm, so, err := d.find(src, n)
	if err != nil {
		return err
	}
	copy(dm.Bytes()[do:do+int(n)], sm.Bytes()[so:so+int(n)])
	return nil
}

func (d *emuDriver) zero(p devPtr, n int64) error {
	m, off, err := d.find(p, n)
	if err != nil {
		return err
	}
	clear(m.Bytes()[off : off+int(n)])
	return nil
}

func (d *emuDriver) launch(name string, grid [3]int, block int, a *args) error {
	return emu.LaunchRaw(name, grid, [3]int{block, 1, 1}, a.slots)
}

// newGraph implements grapher: an emulated graph launches its nodes one
// by one when run, with the grids and parameters they hold then.
func (d *emuDriver) newGraph(recs []launchRec) (graph, error) {
	return &emuGraph{d: d, recs: cloneRecs(recs)}, nil
}

type emuGraph struct {
	d    *emuDriver
	recs []launchRec
}

func (g *emuGraph) set(i int, r *launchRec) error {
	n := &g.recs[i]
	if n.name != r.name || n.block != r.block || len(n.slots) != len(r.slots) {
		return fmt.Errorf("node %d is %s, not %s", i, n.name, r.name)
	}
	n.grid = r.grid
	copy(n.slots, r.slots)
	return nil
}

func (g *emuGraph) run() error { return launchEach(g.d, g.recs) }

func (g *emuGraph) destroy() { g.recs = nil }

func (d *emuDriver) memInfo() (free, total int64, err error) { return d.total - d.used, d.total, nil }

func (d *emuDriver) gemmer() gemmer { return emuGemm{d} }

func (d *emuDriver) info() Info {
	i := d.inf
	i.FreeBytes = d.total - d.used
	return i
}

func (d *emuDriver) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.mems {
		m.Free()
	}
	d.mems, d.used, d.closed = nil, 0, true
}

// emuGemm is cuBLAS's GemmEx as the backend calls it (F16 operands, F32
// accumulation and result), as a plain loop.
type emuGemm struct{ d *emuDriver }

func (g emuGemm) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error {
	return g.gemm(w, x, out, rows, cols, n, ldo, 2, func(b []byte, i int) float32 {
		return quant.FP16ToFloat32(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
	})
}

func (g emuGemm) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error {
	return g.gemm(w, x, out, rows, cols, n, ldo, 4, func(b []byte, i int) float32 {
		return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	})
}

// gemm is the product of operands of elem bytes read by at.
func (g emuGemm) gemm(w, x, out devPtr, rows, cols, n, ldo, elem int, at func([]byte, int) float32) error {
	wm, wo, err := g.d.find(w, int64(rows*cols*elem))
	if err != nil {
		return err
	}
	xm, xo, err := g.d.find(x, int64(n*cols*elem))
	if err != nil {
		return err
	}
	om, oo, err := g.d.find(out, int64(((n-1)*ldo+rows)*4))
	if err != nil {
		return err
	}
	wb, xb, ob := wm.Bytes()[wo:], xm.Bytes()[xo:], om.Bytes()[oo:]
	wf, xf := make([]float32, cols), make([]float32, cols)
	for j := 0; j < n; j++ {
		for l := range xf {
			xf[l] = at(xb, j*cols+l)
		}
		for i := 0; i < rows; i++ {
			for l := range wf {
				wf[l] = at(wb, i*cols+l)
			}
			var s float32
			for l, v := range wf {
				s += v * xf[l]
			}
			binary.LittleEndian.PutUint32(ob[4*(j*ldo+i):], math.Float32bits(s))
		}
	}
	return nil
}
