//go:build cgo && !purego

package cpu

// #cgo CFLAGS: -O3
// #include "delta.h"
import "C"

import (
	"unsafe"

	"github.com/helexa/helexa/pkg/compute/quant"
)

// vectorDelta reports whether the delta rule runs the C vector kernel for
// heads of dim values.
func vectorDelta(dim int) bool {
	return dim%16 == 0 && dim <= 256 && quant.ActiveLevel() >= quant.LevelVNNI && C.hx_delta_simd() != 0
}

// deltaRowsVec is deltaRows with the C vector kernel.
func deltaRowsVec(s []float32, dim, j0, j1, n int, q, k, v []float32, stride int, decay, beta, out []float32, ostride int, scale float32) {
	C.hx_delta_rows((*C.float)(unsafe.Pointer(&s[0])), C.int(dim), C.int(j0), C.int(j1), C.int(n),
		(*C.float)(unsafe.Pointer(&q[0])), (*C.float)(unsafe.Pointer(&k[0])), (*C.float)(unsafe.Pointer(&v[0])), C.long(stride),
		(*C.float)(unsafe.Pointer(&decay[0])), (*C.float)(unsafe.Pointer(&beta[0])),
		(*C.float)(unsafe.Pointer(&out[0])), C.long(ostride), C.float(scale))
}
