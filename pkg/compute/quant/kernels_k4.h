#ifndef HELEXA_QUANT_KERNELS_K4_H
#define HELEXA_QUANT_KERNELS_K4_H
// The Q4_K/Q5_K block decoders shared by the AVX2 kernels (kernels_avx2.c)
// and the AVX-512 VNNI ones: built for AVX2 so that both can inline them.
// Included only where the x86 intrinsics are available.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define HX_K4_ATTR __attribute__((target("avx2,f16c")))

// hx_k4_scales decodes a Q4_K/Q5_K block's eight 6-bit scales (bytes 0-7)
// and mins (bytes 8-15).
HX_K4_ATTR static inline __m128i hx_k4_scales(const uint8_t *q) {
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
HX_K4_ATTR static inline void hx_k4_chunk(const uint8_t *q, __m256i qh, int c, int q5, __m256i *lo, __m256i *hi) {
	const __m256i lo4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
	__m256i b = _mm256_loadu_si256((const __m256i *)q);
	*lo = _mm256_and_si256(b, lo4);
	*hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), lo4);
	if (q5) {
		*lo = _mm256_or_si256(*lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
		*hi = _mm256_or_si256(*hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
	}
}
#endif
