#ifndef HELEXA_QUANT_KERNELS_VNNI_H
#define HELEXA_QUANT_KERNELS_VNNI_H
// What the AVX-512 VNNI kernels of kernels_vnni.c and kernels_il.c share:
// the target attribute and the helpers that decode a block's header.
// Included only where the x86 intrinsics are available.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "kernels_il.h"

#define HX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512dq,f16c,fma")))
// HX_VK is the activation tile of the K-quant kernels: their unpacked
// weight block (eight registers) leaves room for 16 accumulators.
#define HX_VK 16

HX_VNNI static inline float hx_h2f(const uint8_t *p) {
	uint16_t h; memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

// hx_k4_scales decodes a Q4_K/Q5_K block's eight 6-bit scales (int16
// lanes 0-7) and mins (lanes 8-15).
HX_VNNI static inline __m128i hx_k4_scales(const uint8_t *q) {
	uint32_t u[4];
	memcpy(u, q, 12);
	const uint32_t m1 = 0x3f3f3f3fu, m2 = 0x0f0f0f0fu, m3 = 0x03030303u;
	u[3] = ((u[2] >> 4) & m2) | (((u[1] >> 6) & m3) << 4);
	uint32_t aux = u[1] & m1;
	u[1] = (u[2] & m2) | (((u[0] >> 6) & m3) << 4);
	u[2] = aux;
	u[0] &= m1;
	return _mm_loadu_si128((const __m128i *)u); // bytes: 8 scales, 8 mins
}

// hx_k4_chunk unpacks chunk c (32 bytes at q) of a Q4_K/Q5_K block into
// the values of sub-blocks 2c (lo: the low nibbles) and 2c+1 (hi: the high
// ones), with Q5_K's fifth bits from qh (bit 2c of each byte for 2c, bit
// 2c+1 for 2c+1) when q5.
HX_VNNI static inline void hx_k4_chunk(const uint8_t *q, __m256i qh, int c, int q5, __m256i *lo, __m256i *hi) {
	const __m256i lo4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
	__m256i b = _mm256_loadu_si256((const __m256i *)q);
	*lo = _mm256_and_si256(b, lo4);
	*hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), lo4);
	if (q5) {
		*lo = _mm256_or_si256(*lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
		*hi = _mm256_or_si256(*hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
	}
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
