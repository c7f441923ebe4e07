//go:build cgo && !purego

package quant

// #cgo CFLAGS: -O3
// #include "kernels.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/helexa/helexa/pkg/dtype"
)

// Kernels reports which implementation VecDot uses for quantized weights.
const Kernels = "c"

// quantDot calls the C kernel of kernels.c. The lengths are checked (two
// comparisons) so that a caller's mistake panics like the Go kernels do
// instead of reading past the slices.
func quantDot(t dtype.Type, w, xq []byte, n int) float32 {
	nb := n / t.BlockSize()
	if nb <= 0 {
		return 0
	}
	if len(w) < nb*t.TypeSize() || len(xq) < nb*VecDotType(t).TypeSize() {
		panic(fmt.Sprintf("quant: VecDot %s n=%d with %d weight and %d activation bytes (call CheckVecDot)", t, n, len(w), len(xq)))
	}
	wp := (*C.uint8_t)(unsafe.Pointer(&w[0]))
	xp := (*C.uint8_t)(unsafe.Pointer(&xq[0]))
	cnb := C.int(nb)
	switch t {
	case dtype.Q4_0:
		return float32(C.hx_dot_q4_0(wp, xp, cnb))
	case dtype.Q4_1:
		return float32(C.hx_dot_q4_1(wp, xp, cnb))
	case dtype.Q5_0:
		return float32(C.hx_dot_q5_0(wp, xp, cnb))
	case dtype.Q5_1:
		return float32(C.hx_dot_q5_1(wp, xp, cnb))
	case dtype.Q8_0:
		return float32(C.hx_dot_q8_0(wp, xp, cnb))
	case dtype.Q2_K:
		return float32(C.hx_dot_q2_k(wp, xp, cnb))
	case dtype.Q3_K:
		return float32(C.hx_dot_q3_k(wp, xp, cnb))
	case dtype.Q4_K:
		return float32(C.hx_dot_q4_k(wp, xp, cnb))
	case dtype.Q5_K:
		return float32(C.hx_dot_q5_k(wp, xp, cnb))
	case dtype.Q6_K:
		return float32(C.hx_dot_q6_k(wp, xp, cnb))
	}
	return goQuantDot(t, w, xq, n)
}
