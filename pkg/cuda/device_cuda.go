//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/helexa/helexa/pkg/cuda/kernels"
)

// Info describes one GPU (the runner's --probe prints a list of them).
type Info struct {
	Index      int    `json:"index"`
	Name       string `json:"name"`
	Major      int    `json:"major"`
	Minor      int    `json:"minor"`
	TotalBytes int64  `json:"total_bytes"`
	FreeBytes  int64  `json:"free_bytes"`
}

// Probe lists the GPUs the driver sees, with their free memory.
func Probe() ([]Info, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("counting CUDA devices: %w", err)
	}
	var out []Info
	for i := 0; i < n; i++ {
		d, err := Open(i)
		if err != nil {
			return nil, err
		}
		info := d.Info()
		d.Close()
		out = append(out, info)
	}
	return out, nil
}

// device is one GPU's context, owned by a goroutine locked to its OS
// thread: every driver call goes through do.
type device struct {
	info  Info
	dev   cu.Device
	ctx   cu.CUContext
	mod   cu.Module
	fns   map[string]cu.Function
	work  chan func()
	blas  *cublas // nil: cuBLAS could not be opened; matmuls use the matvec kernels
	fault string  // tests only: see envvars.CUDAFault
	err   error   // the first device failure: every later call returns it
}

// errClosed is returned by operations on a closed backend.
var errClosed = errors.New("cuda: the device is closed")

// openDevice starts the owner goroutine, makes the device's primary
// context current on it and loads the kernels.
func openDevice(ordinal int) (*device, error) {
	d := &device{work: make(chan func()), fns: map[string]cu.Function{}}
	ready := make(chan error)
	go d.own(ordinal, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// own is the owner goroutine: it runs the closures sent on work until the
// channel closes, then releases the context.
func (d *device) own(ordinal int, ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.setup(ordinal); err != nil {
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
	d.mod.Unload()
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
	d.info = Info{Index: ordinal, Name: name, Major: major, Minor: minor, TotalBytes: total, FreeBytes: free}
	ptx, err := kernels.PTX(major, minor)
	if err != nil {
		return fmt.Errorf("CUDA device %d (%s): %w", ordinal, name, err)
	}
	if d.mod, err = cu.LoadData(ptx); err != nil {
		return fmt.Errorf("CUDA device %d: loading the kernels: %w", ordinal, err)
	}
	for _, n := range kernels.Names() {
		f, err := d.mod.Function(n)
		if err != nil {
			return fmt.Errorf("CUDA device %d: kernel %s: %w", ordinal, n, err)
		}
		d.fns[n] = f
	}
	d.blas = openCublas() // nil when no libcublas is installed
	return nil
}

// do runs f on the owner goroutine. After a device failure it returns
// that failure without running f: a sticky CUDA error ruins the context.
func (d *device) do(f func() error) error {
	if d.work == nil {
		return errClosed
	}
	done := make(chan error, 1)
	d.work <- func() {
		if d.err != nil {
			done <- d.err
			return
		}
		err := f()
		if err != nil {
			d.err = fmt.Errorf("CUDA device %d: %w", d.info.Index, err)
			err = d.err
		}
		done <- err
	}
	return <-done
}

// close ends the owner goroutine (after the work already sent).
func (d *device) close() {
	if d.work != nil {
		close(d.work)
		d.work = nil
	}
}

// launch runs kernel name over grid × block threads with packed args; it
// is called on the owner goroutine.
func (d *device) launch(name string, grid [3]int, block int, a *args) error {
	f, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("no kernel %s in the loaded module", name)
	}
	if err := f.Launch(grid[0], grid[1], grid[2], block, 1, 1, 0, cu.Stream{}, a.pointers()); err != nil {
		return fmt.Errorf("launching %s: %w", name, err)
	}
	return nil
}

// alloc returns bytes of device memory (at least one byte), zeroed.
func (d *device) alloc(bytes int64) (cu.DevicePtr, error) {
	p, err := cu.MemAlloc(max(bytes, 1))
	if err != nil {
		return 0, fmt.Errorf("allocating %d bytes: %w", bytes, err)
	}
	if err := cu.MemsetD8(p, 0, max(bytes, 1)); err != nil {
		cu.MemFree(p)
		return 0, fmt.Errorf("clearing %d bytes: %w", bytes, err)
	}
	return p, nil
}

// upload copies n bytes from host memory at src to dst.
func upload(dst cu.DevicePtr, src unsafe.Pointer, n int64) error {
	if n == 0 {
		return nil
	}
	if err := cu.MemcpyHtoD(dst, src, n); err != nil {
		return fmt.Errorf("copying %d bytes to the device: %w", n, err)
	}
	return nil
}
