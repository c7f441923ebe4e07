// Helpers shared by kernels.c and kernels_multi.c: the compiler settings that
// keep float operations exactly as written, scalar decoders, and (on x86-64)
// the AVX2 integer helpers. Every function is static inline.
#ifndef HELEXA_QUANT_KERNELS_COMMON_H
#define HELEXA_QUANT_KERNELS_COMMON_H
#include <stdint.h>
#include <string.h>

// No multiply-add contraction: the float operations must round exactly as
// the Go code's (cgo does not accept -ffp-contract=off as a flag).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__FAST_MATH__)
#error "kernels.c must not be built with -ffast-math"
#endif

static inline float hx_fp16(const uint8_t *p) {
	uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
	uint32_t w = (uint32_t)h << 16;
	uint32_t sign = w & 0x80000000u;
	uint32_t two_w = w + w;
	uint32_t nb = (two_w >> 4) + (0xE0u << 23);
	float nf; memcpy(&nf, &nb, 4);
	nf = nf * 0x1.0p-112f;
	uint32_t db = (two_w >> 17) | (126u << 23);
	float df; memcpy(&df, &db, 4);
	df = df - 0.5f;
	uint32_t r;
	if (two_w < (1u << 27)) memcpy(&r, &df, 4); else memcpy(&r, &nf, 4);
	r |= sign;
	float out; memcpy(&out, &r, 4);
	return out;
}

static inline float hx_f32(const uint8_t *p) { float f; memcpy(&f, p, 4); return f; }
static inline float hx_bf16(const uint8_t *p) { uint32_t u = (uint32_t)(p[0] | (p[1] << 8)) << 16; float f; memcpy(&f, &u, 4); return f; }
static inline int16_t hx_i16(const uint8_t *p) { return (int16_t)(uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t hx_u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static inline void hx_scale_min_k4(int j, const uint8_t *q, int32_t *sc, int32_t *m) {
	if (j < 4) { *sc = q[j] & 63; *m = q[j + 4] & 63; }
	else { *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4); *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4); }
}

static inline void hx_q3_scales(const uint8_t *s, int32_t *out) {
	const uint32_t kmask1 = 0x03030303u, kmask2 = 0x0f0f0f0fu;
	uint32_t a0 = hx_u32(s), a1 = hx_u32(s + 4), tmp = hx_u32(s + 8);
	uint32_t aux[4] = {
		(a0 & kmask2) | (((tmp >> 0) & kmask1) << 4),
		(a1 & kmask2) | (((tmp >> 2) & kmask1) << 4),
		((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4),
		((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4),
	};
	for (int i = 0; i < 16; i++) out[i] = (int32_t)(int8_t)(uint8_t)(aux[i / 4] >> (8 * (i % 4))) - 32;
}

// hx_lane_dot16_ref adds to the eight int32 lanes aux[k] the sums over the
// 16 groups j of scales[j] * (q8[16j+k]*a[16j+k] + q8[16j+k+8]*a[16j+k+8])
// (the K-quants' integer dot product; exact).
static inline void hx_lane_dot16_ref(int32_t *aux, const int8_t *a, const int8_t *q8, const int32_t *scales) {
	for (int j = 0; j < 16; j++) {
		int32_t s = scales[j];
		const int8_t *qa = a + 16 * j, *qx = q8 + 16 * j;
		for (int k = 0; k < 8; k++) {
			int32_t p = (int32_t)qx[k] * qa[k] + (int32_t)qx[k + 8] * qa[k + 8];
			aux[k] += s * p;
		}
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_AVX2 __attribute__((target("avx2,f16c")))

// hx_h2f_avx2 converts with the F16C instruction: exact, like hx_fp16, for
// every half that is not a NaN.
HX_AVX2 static inline float hx_h2f_avx2(const uint8_t *p) {
	return _cvtsh_ss((unsigned short)(p[0] | (p[1] << 8)));
}

// hx_hsum8 adds the eight int32 lanes (exact).
HX_AVX2 static inline int32_t hx_hsum8(__m256i v) {
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
	return _mm_cvtsi128_si32(s);
}

// hx_pairs16 sign-extends 16 int8 to int16 ordered v0, v8, v1, v9, ..., v7,
// v15, so that a 16-bit multiply-add yields lane k = v[k]*u[k] + v[k+8]*u[k+8].
HX_AVX2 static inline __m256i hx_pairs16(const int8_t *p) {
	__m128i v = _mm_loadu_si128((const __m128i *)p);
	return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, _mm_srli_si128(v, 8)));
}

// hx_lane_dot16_simd is lane_dot16 in AVX2: the same eight int32 lanes.
HX_AVX2 static inline void hx_lane_dot16_simd(int32_t *aux, const int8_t *a, const int8_t *q8, const int32_t *scales) {
	__m256i acc = _mm256_loadu_si256((const __m256i *)aux);
	for (int j = 0; j < 16; j++) {
		__m256i p = _mm256_madd_epi16(hx_pairs16(a + 16 * j), hx_pairs16(q8 + 16 * j));
		acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(p, _mm256_set1_epi32(scales[j])));
	}
	_mm256_storeu_si256((__m256i *)aux, acc);
}

#endif
#endif
