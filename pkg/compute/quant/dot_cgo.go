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

// KernelPath names the kernels this process runs (HELEXA_CPU_KERNELS):
// the AVX-512 VNNI kernels or the AVX2+FMA ones, with the C ones for the
// other types; the bit-exact C kernels built for AVX2+F16C, the baseline
// C kernels, or the Go ones.
func KernelPath() string {
	switch {
	case ActiveLevel() == LevelPortable:
		return "go"
	case ActiveLevel() == LevelVNNI:
		return "c-avx512vnni"
	case ActiveLevel() == LevelAVX2:
		return "c-avx2+fma"
	case C.hx_simd() != 0:
		return "c-avx2+f16c"
	}
	return "c-baseline"
}

// maxLevel is the fastest level this CPU runs.
func maxLevel() Level {
	switch {
	case C.hx_vnni() != 0:
		return LevelVNNI
	case C.hx_avx2() != 0:
		return LevelAVX2
	}
	return LevelC
}

// fastQuantizeQ8K is quantizeQ8K in AVX-512 at the VNNI level, in AVX2 at
// the AVX2 level (byte-identical); false when it does not run.
func fastQuantizeQ8K(x []float32, dst []byte) bool {
	return quantizeAt(ActiveLevel(), true, x, dst)
}

// fastQuantizeQ8_0 is quantizeQ8_0Act as fastQuantizeQ8K runs quantizeQ8K.
func fastQuantizeQ8_0(x []float32, dst []byte) bool {
	return quantizeAt(ActiveLevel(), false, x, dst)
}

// quantizeAt runs the vector Q8_K (k) or Q8_0 activation quantizer of
// level lvl over x; false below the AVX2 level or for an x shorter than
// one block (256 or 32 values).
func quantizeAt(lvl Level, k bool, x []float32, dst []byte) bool {
	block := 32
	if k {
		block = 256
	}
	if lvl < LevelAVX2 || len(x) < block {
		return false
	}
	xp, dp, n := (*C.float)(unsafe.Pointer(&x[0])), (*C.uint8_t)(unsafe.Pointer(&dst[0])), C.int(len(x))
	switch {
	case lvl >= LevelVNNI && k:
		C.hx_quantize_q8k(xp, n, dp)
	case lvl >= LevelVNNI:
		C.hx_quantize_q8_0(xp, n, dp)
	case k:
		C.hx_quantize_q8k_avx2(xp, n, dp)
	default:
		C.hx_quantize_q8_0_avx2(xp, n, dp)
	}
	return true
}

// vnniCovers reports whether the AVX-512 VNNI kernels cover t.
func vnniCovers(t dtype.Type) bool { return C.hx_vnni_supports(C.int(t)) != 0 }

// avx2Covers reports whether the AVX2+FMA kernels cover t.
func avx2Covers(t dtype.Type) bool { return C.hx_avx2_supports(C.int(t)) != 0 }

// fastRows runs VecDotRowsMulti's loops with the AVX-512 VNNI kernels, or
// else the AVX2+FMA ones, when the level allows them and they cover t
// (arguments checked, n > 0).
func fastRows(lvl Level, t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) bool {
	wp, xp, op := (*C.uint8_t)(unsafe.Pointer(&w[0])), (*C.uint8_t)(unsafe.Pointer(&xq[0])), (*C.float)(unsafe.Pointer(&out[0]))
	switch {
	case lvl >= LevelVNNI && C.hx_vnni_supports(C.int(t)) != 0:
		C.hx_vnni_rows(C.int(t), wp, C.size_t(rowBytes), C.int(nRows), xp, C.size_t(xStride), C.int(nX), C.int(n), op, C.size_t(outStride))
	case lvl >= LevelAVX2 && C.hx_avx2_supports(C.int(t)) != 0:
		return C.hx_avx2_rows(C.int(t), wp, C.size_t(rowBytes), C.int(nRows), xp, C.size_t(xStride), C.int(nX), C.int(n), op, C.size_t(outStride)) != 0
	default:
		return false
	}
	return true
}

// quantDot calls the C kernel of kernels.c. The lengths are checked (two
// comparisons) so that a caller's mistake panics like the Go kernels do
// instead of reading past the slices.
func quantDot(t dtype.Type, w, xq []byte, n int) float32 {
	l, ok := layoutOf(t)
	if !ok || l.block == 1 {
		return goQuantDot(t, w, xq, n)
	}
	nb := n / l.block
	if nb <= 0 {
		return 0
	}
	if len(w) < nb*l.wsize || len(xq) < nb*l.xsize {
		panic(fmt.Sprintf("quant: VecDot %s n=%d with %d weight and %d activation bytes (call CheckVecDot)", t, n, len(w), len(xq)))
	}
	return float32(C.hx_dot(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), (*C.uint8_t)(unsafe.Pointer(&xq[0])), C.int(n)))
}

// dotRows runs VecDotRows' loop in C: one cgo call for the whole range
// (arguments checked by VecDotRows, n > 0, nRows > 0).
func dotRows(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) {
	C.hx_dot_rows(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), C.size_t(rowBytes), C.int(nRows),
		(*C.uint8_t)(unsafe.Pointer(&xq[0])), C.int(n), (*C.float)(unsafe.Pointer(&out[0])))
}

// dotRowsBase is dotRows with the baseline C kernels even where AVX2 is
// available, so tests cover both builds of kernels.c.
func dotRowsBase(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) {
	C.hx_dot_rows_base(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), C.size_t(rowBytes), C.int(nRows),
		(*C.uint8_t)(unsafe.Pointer(&xq[0])), C.int(n), (*C.float)(unsafe.Pointer(&out[0])))
}

// dotRowsMulti runs VecDotRowsMulti's loops in C (arguments checked, n > 0,
// nRows > 0, nX > 0).
func dotRowsMulti(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) {
	C.hx_dot_rows_multi(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), C.size_t(rowBytes), C.int(nRows),
		(*C.uint8_t)(unsafe.Pointer(&xq[0])), C.size_t(xStride), C.int(nX), C.int(n),
		(*C.float)(unsafe.Pointer(&out[0])), C.size_t(outStride))
}

// dotRowsMultiBase is dotRowsMulti with the baseline C kernels (tests).
func dotRowsMultiBase(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) {
	C.hx_dot_rows_multi_base(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), C.size_t(rowBytes), C.int(nRows),
		(*C.uint8_t)(unsafe.Pointer(&xq[0])), C.size_t(xStride), C.int(nX), C.int(n),
		(*C.float)(unsafe.Pointer(&out[0])), C.size_t(outStride))
}

// packGroupBytes is the size of one packed group of 16 rows of n values of
// type t, 0 when t does not pack.
func packGroupBytes(t dtype.Type, n int) int { return int(C.hx_r16_group_bytes(C.int(t), C.int(n))) }

// packGroups packs ng groups of 16 rows of w (rowBytes apart) into dst.
func packGroups(t dtype.Type, w []byte, rowBytes, ng, n int, dst []byte) {
	C.hx_r16_pack(C.int(t), (*C.uint8_t)(unsafe.Pointer(&w[0])), C.size_t(rowBytes), C.int(ng), C.int(n),
		(*C.uint8_t)(unsafe.Pointer(&dst[0])))
}

// packedRows runs the packed kernels over ng groups (arguments checked);
// false when they could not allocate their buffers.
func packedRows(t dtype.Type, p []byte, ng int, xq []byte, xStride, nX, n int, out []float32, outStride int) bool {
	return C.hx_r16_rows(C.int(t), (*C.uint8_t)(unsafe.Pointer(&p[0])), C.int(ng), (*C.uint8_t)(unsafe.Pointer(&xq[0])),
		C.size_t(xStride), C.int(nX), C.int(n), (*C.float)(unsafe.Pointer(&out[0])), C.size_t(outStride)) != 0
}
