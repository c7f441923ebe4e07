//go:build cgo && !purego

package cpu

// #cgo CFLAGS: -O3
// #cgo LDFLAGS: -lm
// #include "attn.h"
import "C"

import (
	"unsafe"

	"github.com/helexa/helexa/pkg/compute/quant"
)

// vectorAttention reports which C vector kernels Attention runs: the
// AVX-512 ones at the avx512 level, the AVX2 ones at the avx2 level, on a
// CPU that has them (HELEXA_CPU_KERNELS).
func vectorAttention() vecISA {
	switch simd, lvl := cpuVecISA(), quant.ActiveLevel(); {
	case lvl >= quant.LevelVNNI && simd >= vecAVX512:
		return vecAVX512
	case lvl >= quant.LevelAVX2 && simd >= vecAVX2:
		return vecAVX2
	}
	return vecNone
}

// cpuVecISA is the widest build of the vector kernels this CPU runs,
// whatever the kernel level.
func cpuVecISA() vecISA { return vecISA(C.hx_attn_simd()) }

// attendGroup computes the g query heads of one row that share KV head kvh
// (q and out hold g×d values) over cached positions [first, n).
func attendGroup(isa vecISA, kv *KVCache, layer int, blocks []int32, kvh, g, d, n, first int, scale float32, q, out, scores []float32) {
	base, stride := kv.column(kvh * d)
	if kv.F16 {
		C.hx_attend16(C.int(isa), (*C.float)(unsafe.Pointer(&q[0])), (*C.float)(unsafe.Pointer(&out[0])), C.int(g), C.int(d),
			(*C.uint16_t)(unsafe.Pointer(&kv.k16[layer][base])), (*C.uint16_t)(unsafe.Pointer(&kv.v16[layer][base])),
			(*C.int32_t)(unsafe.Pointer(&blocks[0])), C.int(kv.BlockSize), C.int(stride), 0, C.int(n), C.int(first),
			C.float(scale), (*C.float)(unsafe.Pointer(&scores[0])))
		return
	}
	C.hx_attend(C.int(isa), (*C.float)(unsafe.Pointer(&q[0])), (*C.float)(unsafe.Pointer(&out[0])), C.int(g), C.int(d),
		(*C.float)(unsafe.Pointer(&kv.k[layer][base])), (*C.float)(unsafe.Pointer(&kv.v[layer][base])),
		(*C.int32_t)(unsafe.Pointer(&blocks[0])), C.int(kv.BlockSize), C.int(stride), 0, C.int(n), C.int(first),
		C.float(scale), (*C.float)(unsafe.Pointer(&scores[0])))
}

// attendTileRows is how many consecutive query rows attendTile takes for g
// heads per KV head of size d (0: it cannot).
func attendTileRows(g, d int) int { return int(C.hx_attend_tile_rows(C.int(g), C.int(d))) }

// attendTile is attendGroup for attendTileRows(g, d) consecutive query rows
// (row i at q[i*qs:], out[i*qs:]) over positions [0, n0+i), or their last
// window when window > 0, each cached row read once for all of them.
func attendTile(isa vecISA, kv *KVCache, layer int, blocks []int32, kvh, g, d, rows, n0, window, qs int, scale float32, q, out, scores []float32) {
	base, stride := kv.column(kvh * d)
	if kv.F16 {
		C.hx_attend_tile16(C.int(isa), (*C.float)(unsafe.Pointer(&q[0])), C.long(qs), (*C.float)(unsafe.Pointer(&out[0])), C.int(rows), C.int(g), C.int(d),
			(*C.uint16_t)(unsafe.Pointer(&kv.k16[layer][base])), (*C.uint16_t)(unsafe.Pointer(&kv.v16[layer][base])),
			(*C.int32_t)(unsafe.Pointer(&blocks[0])), C.int(kv.BlockSize), C.int(stride), 0, C.int(n0), C.int(window),
			C.float(scale), (*C.float)(unsafe.Pointer(&scores[0])))
		return
	}
	C.hx_attend_tile(C.int(isa), (*C.float)(unsafe.Pointer(&q[0])), C.long(qs), (*C.float)(unsafe.Pointer(&out[0])), C.int(rows), C.int(g), C.int(d),
		(*C.float)(unsafe.Pointer(&kv.k[layer][base])), (*C.float)(unsafe.Pointer(&kv.v[layer][base])),
		(*C.int32_t)(unsafe.Pointer(&blocks[0])), C.int(kv.BlockSize), C.int(stride), 0, C.int(n0), C.int(window),
		C.float(scale), (*C.float)(unsafe.Pointer(&scores[0])))
}

// swigluVec is SwiGLU over one range with the C vector kernel.
func swigluVec(isa vecISA, gate, up, out []float32) {
	C.hx_swiglu(C.int(isa), (*C.float)(unsafe.Pointer(&gate[0])), (*C.float)(unsafe.Pointer(&up[0])), (*C.float)(unsafe.Pointer(&out[0])), C.int(len(out)))
}

// convSiLUVec is convRange with the C vector kernel; wt holds the taps
// channel-minor (k rows of ch).
func convSiLUVec(x, st, wt, out []float32, ch, k, lo, hi int) {
	C.hx_conv_silu((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&st[0])), (*C.float)(unsafe.Pointer(&wt[0])),
		(*C.float)(unsafe.Pointer(&out[0])), C.int(ch), C.int(k), C.int(len(x)/ch), C.int(lo), C.int(hi))
}

// toF16Vec rounds src to F16 bits with the C vector kernel.
func toF16Vec(isa vecISA, dst []uint16, src []float32) {
	C.hx_to_f16(C.int(isa), (*C.float)(unsafe.Pointer(&src[0])), (*C.uint16_t)(unsafe.Pointer(&dst[0])), C.int(len(src)))
}
