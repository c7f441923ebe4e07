package cuda

import (
	"errors"
	"unsafe"

	hxdevice "github.com/helexa/helexa/pkg/device"
)

// devPtr is an address in the driver's memory (device memory on a GPU,
// host memory under the emulator).
type devPtr uintptr

// driver is what the backend needs of a GPU: the real one
// (gorgonia.org/cu, build tag cuda) or the CPU emulator of the kernels
// (pkg/compute/cuda/emu), on which the backend's tests run whole models.
type driver interface {
	// do runs f where driver calls may be made (the real driver's owner
	// goroutine). A failure of f is a device failure: do returns it, and
	// every later call returns it without running f.
	do(f func() error) error
	// pinned runs f where driver calls are cheapest (the real driver's
	// owner goroutine, where do then runs its function in place), whatever
	// the device's state; a panic in f is raised again in the caller.
	pinned(f func())
	// The calls below run inside do.
	alloc(n int64) (devPtr, error) // zeroed memory
	free(p devPtr)
	upload(dst devPtr, src unsafe.Pointer, n int64) error
	download(dst unsafe.Pointer, src devPtr, n int64) error
	copyD(dst, src devPtr, n int64) error // device to device
	zero(p devPtr, n int64) error
	launch(name string, grid [3]int, block int, a *args) error
	memInfo() (free, total int64, err error)
	// gemmer is cuBLAS, or nil without it (matmuls then run on the
	// matvec kernels).
	gemmer() gemmer
	// info describes the device; close releases it (after the work
	// already sent).
	info() Info
	close()
}

// gemmer computes out (F32) = x·Wᵀ for w (rows × cols) and x (n × cols),
// all row-major (see planGemm), both F16 (gemmF16) or both F32 (gemmF32,
// without reduced-precision shortcuts); out's rows are ldo values apart
// (ldo ≥ rows: a block of columns of a wider output); inside do.
type gemmer interface {
	gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error
	gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error
}

// Info describes one GPU: what the runner's --probe prints, in the shape
// helexa's device choice reads.
type Info = hxdevice.GPU

// errClosed is returned by operations on a closed device.
var errClosed = errors.New("cuda: the device is closed")
