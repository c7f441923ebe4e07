#ifndef HELEXA_QUANT_KERNELS_VNNI_H
#define HELEXA_QUANT_KERNELS_VNNI_H
// What the AVX-512 VNNI kernels of kernels_vnni.c and kernels_il.c share:
// the target attribute, a block's header and the prefill entry points.
// Included only where the x86 intrinsics are available.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "kernels_il.h"
#include "kernels_k4.h"

#define HX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512dq,f16c,fma")))
// HX_VK is the activation tile of the K-quant kernels: their unpacked
// weight block (eight registers) leaves room for 16 accumulators.
#define HX_VK 16

HX_VNNI static inline float hx_h2f(const uint8_t *p) {
	uint16_t h; memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

// hx_vnni_q8_0 is hx_vnni_rows for Q8_0 with the row-at-a-time kernels.
HX_VNNI void hx_vnni_q8_0(const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int nb, float *out,
                          size_t os);
// hx_il_rows and hx_il8_rows (kernels_il.c) run the interleaved prefill
// over the groups of 16 rows of the file's layout (w, rb bytes apart;
// tile: the kernel for the rows past the last group) or of packed groups
// (pk, gb bytes apart); 0 when they could not allocate their buffers.
HX_VNNI int hx_il_rows(int type, hx_vfn tile, const uint8_t *w, size_t rb, const uint8_t *pk, size_t gb, int nrows,
                       const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os);
HX_VNNI int hx_il8_rows(const uint8_t *w, size_t rb, const uint8_t *pk, size_t gb, int nrows, const uint8_t *x, size_t xs,
                        int nx, int nb, float *out, size_t os);
#endif
