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
// and mins (bytes 8-15) from the twelve bytes at q, in vector registers: a
// scalar decode was a quarter of the AVX2 decode kernels' time. It reads
// sixteen bytes (in a block, the scales are followed by the values).
//
//	scales 0-3: q[0-3] & 63       scales 4-7: q[8-11] & 15 | (q[0-3] >> 6) << 4
//	mins 0-3:   q[4-7] & 63       mins 4-7:   q[8-11] >> 4 | (q[4-7] >> 6) << 4
HX_K4_ATTR static inline __m128i hx_k4_scales(const uint8_t *q) {
	const __m128i v = _mm_loadu_si128((const __m128i *)q);
	const __m128i a = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
	const __m128i b = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7));
	// the low bits: a masked, and for mins 4-7 a's high nibbles (a 16-bit
	// shift, the bits it brings in from the next byte masked off)
	const __m128i lo = _mm_or_si128(_mm_and_si128(a, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0)),
	                                _mm_and_si128(_mm_srli_epi16(a, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15)));
	// the high bits of scales and mins 4-7: bits 6 and 7 of b moved to 4 and 5
	return _mm_or_si128(lo, _mm_and_si128(_mm_srli_epi16(b, 2), _mm_setr_epi8(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48)));
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
