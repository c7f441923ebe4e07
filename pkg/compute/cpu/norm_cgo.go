//go:build cgo && !purego

package cpu

// #include "norm.h"
import "C"

import "unsafe"

// rmsNormVec is RMSNorm of rows rows of n values of x into out (which may
// be x) with the C kernel: the Go kernel's bits.
func rmsNormVec(x, out, w []float32, rows, n int, eps float32) {
	C.hx_rmsnorm((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&out[0])), (*C.float)(unsafe.Pointer(&w[0])),
		C.int(rows), C.int(n), C.float(eps))
}

// addVec adds src to dst with the C kernel.
func addVec(dst, src []float32) {
	C.hx_add((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.long(len(dst)))
}

// ropeVec is RoPE of rows rows of x (heads of hd values each) by their
// rows of cs (dims values each) with the C kernel: the Go kernel's bits.
func ropeVec(x []float32, rows, heads, hd int, cs []float32, dims int, neox bool) {
	nx := 0
	if neox {
		nx = 1
	}
	C.hx_rope((*C.float)(unsafe.Pointer(&x[0])), C.int(rows), C.int(heads), C.int(hd), (*C.float)(unsafe.Pointer(&cs[0])), C.int(dims), C.int(nx))
}
