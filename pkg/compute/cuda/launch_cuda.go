//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

// hx_launch launches f with the n 8-byte parameter slots at slots (each
// parameter read from the start of its slot) on the legacy default stream.
static CUresult hx_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned long long *slots, int n) {
	void *params[32];
	if (n > 32) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) params[i] = &slots[i];
	return cuLaunchKernel(f, gx, gy, gz, bx, 1, 1, 0, 0, params, 0);
}

static const char *hx_error_name(CUresult r) {
	const char *s = 0;
	cuGetErrorName(r, &s);
	return s ? s : "an unknown CUDA error";
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// cu.Function (gorgonia.org/cu v0.9.6) is a struct of one CUfunction; these
// two arrays fail to compile if that ever changes size.
var (
	_ [unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil))]struct{}
	_ [unsafe.Sizeof(C.CUfunction(nil)) - unsafe.Sizeof(cu.Function{})]struct{}
)

// kernelFn is a loaded kernel's handle. cu.Function's own Launch copies
// the parameters into two C allocations per call; at the hundreds of
// launches of one decode step that costs more than the launch, so the
// backend launches through hx_launch with its args' slots as they are.
type kernelFn C.CUfunction

func fnOf(f cu.Function) kernelFn { return *(*kernelFn)(unsafe.Pointer(&f)) }

// launchFn launches k with a's parameters.
func launchFn(k kernelFn, grid [3]int, block int, a *args) error {
	var slots *C.ulonglong
	if len(a.slots) > 0 {
		slots = (*C.ulonglong)(unsafe.Pointer(&a.slots[0]))
	}
	r := C.hx_launch(C.CUfunction(k), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(block), slots, C.int(len(a.slots)))
	if r != C.CUDA_SUCCESS {
		return cuErr("cuLaunchKernel", r)
	}
	return nil
}

// cuErr is the error of a driver call that returned r.
func cuErr(call string, r C.CUresult) error {
	return fmt.Errorf("%s: %s (%d)", call, C.GoString(C.hx_error_name(r)), int(r))
}
