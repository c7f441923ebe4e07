//go:build cuda

package cuda

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/helexa/helexa/pkg/compute/cuda/kernels"
)

// Options are a backend's settings beyond the GPU it runs on.
type Options struct {
	// KernelTimes, when set, is a path the backend keeps a table of
	// every kernel's GPU time in (HELEXA_CUDA_TIMES).
	KernelTimes string
	// PTX loads the kernels from their PTX, which the driver compiles
	// for the GPU, even where machine code for it is shipped
	// (HELEXA_CUDA_PTX).
	PTX bool
	// NoGraphs sends every kernel launch on its own instead of replaying
	// repeated runs of them as CUDA graphs (HELEXA_CUDA_GRAPHS=0); timing
	// kernels (KernelTimes) implies it.
	NoGraphs bool
	// NoPDL chains a graph's kernels by plain edges, each starting only
	// once the one before it has finished (HELEXA_CUDA_PDL=0), instead of
	// by programmatic edges where the GPU (compute capability 9.0 or
	// later) and the driver have them.
	NoPDL bool
}

// Open starts a backend on GPU ordinal: its primary context on a
// goroutine locked to an OS thread, the kernels, and cuBLAS when found.
func Open(ordinal int, o Options) (*Backend, error) {
	d, err := openDevice(ordinal, &o)
	if err != nil {
		return nil, err
	}
	if o.KernelTimes != "" {
		return newBackend(&timedDriver{driver: d, t: newKernelTimer(o.KernelTimes)}), nil
	}
	if o.NoGraphs || !graphsFound() {
		return newBackend(d), nil
	}
	// the kernels built for compute_90 and later wait for the kernel
	// before them (hx_grid_wait); those for 8.x do not, so they get no
	// programmatic edges
	d.pdl = !o.NoPDL && d.inf.Major >= 9 && pdlFound()
	return newBackend(withGraphs(d)), nil
}

// Probe lists the GPUs the driver sees, with their free memory.
func Probe() ([]Info, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("counting CUDA devices: %w", err)
	}
	out := []Info{}
	for i := 0; i < n; i++ {
		d, err := openDevice(i, nil) // the description only: no kernels, no cuBLAS
		if err != nil {
			return nil, err
		}
		out = append(out, d.info())
		d.close()
	}
	return out, nil
}

// device is the real driver: one GPU's context, owned by a goroutine
// locked to its OS thread; every driver call runs there (do).
type device struct {
	inf  Info
	dev  cu.Device
	ctx  cu.CUContext
	mod  cu.Module
	fns  map[string]kernelFn
	work chan func()
	tid  int     // the owner goroutine's OS thread
	blas *cublas // nil: cuBLAS could not be opened
	pdl  bool    // graphs chain their kernels by programmatic edges
	err  error   // the first device failure: every later call returns it
}

var (
	_ driver  = (*device)(nil)
	_ grapher = (*device)(nil)
)

// openDevice starts the owner goroutine and makes the device's primary
// context current on it; with compute options it also loads the kernels
// and cuBLAS (a probe, nil, needs neither).
func openDevice(ordinal int, compute *Options) (*device, error) {
	d := &device{work: make(chan func()), fns: map[string]kernelFn{}}
	ready := make(chan error)
	go d.own(ordinal, compute, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// own is the owner goroutine: it runs the closures sent on work until the
// channel closes, then releases the context (and with it every
// allocation).
func (d *device) own(ordinal int, compute *Options, ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d.tid = syscall.Gettid()
	err := d.setup(ordinal)
	if err == nil && compute != nil {
		err = d.load(compute.PTX)
	}
	if err != nil {
		ready <- err
		return
	}
	close(ready)
	for f := range d.work {
		f()
	}
	if d.blas != nil {
		d.blas.close()
	}
	if len(d.fns) > 0 {
		d.mod.Unload()
	}
	d.dev.ReleasePrimaryCtx()
}

func (d *device) setup(ordinal int) error {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return fmt.Errorf("CUDA device %d: %w", ordinal, err)
	}
	d.dev = dev
	name, _ := dev.Name()
	major, err1 := dev.Attribute(cu.ComputeCapabilityMajor)
	minor, err2 := dev.Attribute(cu.ComputeCapabilityMinor)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("CUDA device %d: reading its compute capability: %v %v", ordinal, err1, err2)
	}
	if d.ctx, err = dev.RetainPrimaryCtx(); err != nil {
		return fmt.Errorf("CUDA device %d: retaining its context: %w", ordinal, err)
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("CUDA device %d: making its context current: %w", ordinal, err)
	}
	free, total, err := cu.MemInfo()
	if err != nil {
		return fmt.Errorf("CUDA device %d: memory info: %w", ordinal, err)
	}
	d.inf = Info{Index: ordinal, Name: name, Major: major, Minor: minor, TotalBytes: total, FreeBytes: free}
	return nil
}

// load loads the kernels for the device's compute capability (its
// machine code when there is a build for it and ptx is false, else the
// PTX, which the driver compiles) and opens cuBLAS (nil when none is
// installed).
func (d *device) load(ptxOnly bool) error {
	ordinal := d.inf.Index
	ptx, err := kernels.PTX(d.inf.Major, d.inf.Minor)
	if err != nil {
		return fmt.Errorf("CUDA device %d (%s): %w", ordinal, d.inf.Name, err)
	}
	images := []string{ptx}
	if bin := kernels.Cubin(d.inf.Major, d.inf.Minor); bin != nil && !ptxOnly {
		images = []string{string(bin), ptx}
	}
	for i, image := range images {
		if err = d.loadImage(image); err == nil {
			break
		}
		if i+1 < len(images) { // the machine code would not load: the driver compiles the PTX
			continue
		}
		return fmt.Errorf("CUDA device %d: loading the kernels: %w", ordinal, err)
	}
	d.blas = openCublas()
	return nil
}

// loadImage loads one build of the kernels and finds every kernel in it;
// on failure nothing stays loaded.
func (d *device) loadImage(image string) error {
	mod, err := cu.LoadData(image)
	if err != nil {
		return err
	}
	fns := make(map[string]kernelFn, len(kernels.Names()))
	for _, n := range kernels.Names() {
		f, err := mod.Function(n)
		if err != nil {
			mod.Unload()
			return fmt.Errorf("kernel %s: %w", n, err)
		}
		fns[n] = fnOf(f)
	}
	d.mod, d.fns = mod, fns
	return nil
}

func (d *device) do(f func() error) error {
	if d.work == nil {
		return errClosed
	}
	if d.onOwner() { // inside pinned: a plain call
		return d.call(f)
	}
	done := make(chan error, 1)
	d.work <- func() { done <- d.call(f) }
	return <-done
}

// onOwner reports whether the caller is the owner goroutine (the only
// goroutine that runs on its locked thread).
func (d *device) onOwner() bool { return syscall.Gettid() == d.tid }

// call runs f on the owner goroutine; its failure is the device's.
func (d *device) call(f func() error) error {
	if d.err != nil {
		return d.err
	}
	if err := f(); err != nil {
		d.err = fmt.Errorf("CUDA device %d: %w", d.inf.Index, err)
		return d.err
	}
	return nil
}

func (d *device) pinned(f func()) {
	if d.work == nil || d.onOwner() {
		f()
		return
	}
	done := make(chan any, 1)
	d.work <- func() {
		defer func() { done <- recover() }()
		f()
	}
	if r := <-done; r != nil {
		panic(r)
	}
}

func (d *device) close() {
	if d.work != nil {
		close(d.work)
		d.work = nil
	}
}

func (d *device) info() Info { return d.inf }

func (d *device) gemmer() gemmer {
	if d.blas == nil {
		return nil
	}
	return d.blas
}

func (d *device) launch(name string, grid [3]int, block int, a *args) error {
	f, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("no kernel %s in the loaded module", name)
	}
	if err := launchFn(f, grid, block, a); err != nil {
		return fmt.Errorf("launching %s: %w", name, err)
	}
	return nil
}

func (d *device) alloc(n int64) (devPtr, error) {
	p, err := cu.MemAlloc(max(n, 1))
	if err != nil {
		return 0, fmt.Errorf("allocating %d bytes: %w", n, err)
	}
	if err := cu.MemsetD8(p, 0, max(n, 1)); err != nil {
		cu.MemFree(p)
		return 0, fmt.Errorf("clearing %d bytes: %w", n, err)
	}
	return devPtr(p), nil
}

func (d *device) free(p devPtr) { cu.MemFree(cu.DevicePtr(p)) }

func (d *device) upload(dst devPtr, src unsafe.Pointer, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemcpyHtoD(cu.DevicePtr(dst), src, n); err != nil {
		return fmt.Errorf("copying %d bytes to the device: %w", n, err)
	}
	return nil
}

func (d *device) download(dst unsafe.Pointer, src devPtr, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemcpyDtoH(dst, cu.DevicePtr(src), n); err != nil {
		return fmt.Errorf("copying %d bytes to the host: %w", n, err)
	}
	return nil
}

func (d *device) copyD(dst, src devPtr, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), n); err != nil {
		return fmt.Errorf("copying %d bytes on the device: %w", n, err)
	}
	return nil
}

func (d *device) zero(p devPtr, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemsetD8(cu.DevicePtr(p), 0, n); err != nil {
		return fmt.Errorf("clearing %d bytes: %w", n, err)
	}
	return nil
}

func (d *device) memInfo() (free, total int64, err error) { return cu.MemInfo() }
