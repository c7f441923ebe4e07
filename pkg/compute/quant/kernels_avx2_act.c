//go:build cgo && !purego

// AVX2 activation quantizers (Q8_K for the K-quant kernels, Q8_0 for the
// Q8_0 ones), byte-identical to the Go quantizers: the products of
// kernels_avx2.c read what they write.

#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define HX_A2 __attribute__((target("avx2,fma,f16c")))

// hx_a2_hmax is the largest of v's eight lanes.
HX_A2 static inline float hx_a2_hmax(__m256 v) {
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// hx_a2_round16 rounds 16 floats of x times s to the nearest integer (ties
// to even), stores them as int8 at q (they lie within ±127) and returns
// their sum.
HX_A2 static inline int32_t hx_a2_round16(const float *x, __m256 s, int8_t *q) {
	const int rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
	const __m256 top = _mm256_set1_ps(127);
	const __m256i a = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_round_ps(_mm256_mul_ps(s, _mm256_loadu_ps(x)), rn), top));
	const __m256i b = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_round_ps(_mm256_mul_ps(s, _mm256_loadu_ps(x + 8)), rn), top));
	// packs works within 128-bit lanes: a0-3 b0-3 | a4-7 b4-7, put back in order
	const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
	_mm_storeu_si128((__m128i *)q, _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
	__m128i t = _mm_add_epi32(_mm256_castsi256_si128(_mm256_add_epi32(a, b)), _mm256_extracti128_si256(_mm256_add_epi32(a, b), 1));
	t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
	t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
	return _mm_cvtsi128_si32(t);
}

// hx_quantize_q8k_a2 is quantizeQ8K in AVX2 (byte-identical: the scale
// from the first element of largest magnitude, values rounded half to
// even, the int16 sums of 16).
HX_A2 static void hx_quantize_q8k_a2(const float *x, int n, uint8_t *dst) {
	const __m256 signbit = _mm256_set1_ps(-0.0f);
	for (int i = 0; i < n / 256; i++, x += 256, dst += 292) {
		__m256 am = _mm256_setzero_ps();
		for (int k = 0; k < 256; k += 8) am = _mm256_max_ps(am, _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + k)));
		const float amax = hx_a2_hmax(am);
		if (amax == 0) {
			memset(dst, 0, 292);
			continue;
		}
		float mx = 0;
		for (int k = 0; k < 256; k += 8) {
			const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(signbit, _mm256_loadu_ps(x + k)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
			if (hit) {
				mx = x[k + __builtin_ctz((unsigned)hit)];
				break;
			}
		}
		const float iscale = -127 / mx;
		for (int k = 0; k < 256; k += 16) {
			const int16_t s16 = (int16_t)hx_a2_round16(x + k, _mm256_set1_ps(iscale), (int8_t *)(dst + 4 + k));
			memcpy(dst + 260 + 2 * (k / 16), &s16, 2);
		}
		const float d = 1 / iscale;
		memcpy(dst, &d, 4);
	}
}

// hx_quantize_q8_0_a2 is quantizeQ8_0Act in AVX2 (byte-identical: the
// scale amax/127 stored as fp16, values round(x·127/amax) half to even).
HX_A2 static void hx_quantize_q8_0_a2(const float *x, int n, uint8_t *dst) {
	const __m256 signbit = _mm256_set1_ps(-0.0f);
	for (int i = 0; i < n / 32; i++, x += 32, dst += 34) {
		__m256 am = _mm256_max_ps(_mm256_andnot_ps(signbit, _mm256_loadu_ps(x)), _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 8)));
		am = _mm256_max_ps(am, _mm256_max_ps(_mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 16)), _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 24))));
		const float amax = hx_a2_hmax(am);
		const uint16_t h = _cvtss_sh(amax / 127, _MM_FROUND_TO_NEAREST_INT);
		memcpy(dst, &h, 2);
		const __m256 id = _mm256_set1_ps(amax != 0 ? 127 / amax : 0);
		hx_a2_round16(x, id, (int8_t *)(dst + 2));
		hx_a2_round16(x + 16, id, (int8_t *)(dst + 18));
	}
}

void hx_quantize_q8k_avx2(const float *x, int n, uint8_t *dst) { hx_quantize_q8k_a2(x, n, dst); }
void hx_quantize_q8_0_avx2(const float *x, int n, uint8_t *dst) { hx_quantize_q8_0_a2(x, n, dst); }

#else
void hx_quantize_q8k_avx2(const float *x, int n, uint8_t *dst) { (void)x; (void)n; (void)dst; }
void hx_quantize_q8_0_avx2(const float *x, int n, uint8_t *dst) { (void)x; (void)n; (void)dst; }
#endif
