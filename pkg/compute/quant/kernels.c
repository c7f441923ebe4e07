//go:build cgo && !purego

// C versions of the vec_dot kernels of dot_legacy.go and dot_kquants.go.
// They perform the same integer sums and the same float operations in the
// same order as the Go code (compiled with -ffp-contract=off, no fast-math,
// so float reductions are not reassociated), so results are bit-identical.
// Each kernel is compiled twice: for the baseline target and for AVX2+F16C,
// and the AVX2 build is chosen at run time when the CPU supports it. The
// AVX2 build replaces some integer inner loops (Q8_0, Q4_0, the K-quants'
// lane dot) with intrinsics that compute the same exact integer sums, and
// decodes fp16 scales with F16C (exact, like hx_fp16, for every non-NaN
// half). hx_dot_rows runs a whole range of weight rows per call, so Go pays
// one cgo transition per range, not per row.

#include <stdint.h>
#include <string.h>
#include "kernels.h"

#include "kernels_common.h"

#define HX_KERNELS(SFX, ATTR)                                                           \
ATTR static __attribute__((unused)) float hx_dot_q4_0_gen##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	for (int ib = 0; ib < nb; ib++) {                                                   \
		const uint8_t *wb = w + ib * 18; const int8_t *xq = (const int8_t *)(x + ib * 34 + 2); \
		int32_t s0 = 0, s1 = 0;                                                         \
		for (int j = 0; j < 16; j++) {                                                  \
			s0 += ((int32_t)(wb[2 + j] & 0x0F) - 8) * xq[j];                            \
			s1 += ((int32_t)(wb[2 + j] >> 4) - 8) * xq[16 + j];                         \
		}                                                                               \
		float p = (float)(s0 + s1) * hx_h2f##SFX(wb);                                       \
		sumf += p * hx_h2f##SFX(x + ib * 34);                                               \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q4_1##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	for (int ib = 0; ib < nb; ib++) {                                                   \
		const uint8_t *wb = w + ib * 20, *xb = x + ib * 36; const int8_t *xq = (const int8_t *)(xb + 4); \
		int32_t s0 = 0, s1 = 0;                                                         \
		for (int j = 0; j < 16; j++) {                                                  \
			s0 += (int32_t)(wb[4 + j] & 0x0F) * xq[j];                                  \
			s1 += (int32_t)(wb[4 + j] >> 4) * xq[16 + j];                               \
		}                                                                               \
		float dd = hx_h2f##SFX(wb) * hx_h2f##SFX(xb);                                           \
		float a = dd * (float)(s0 + s1);                                                \
		float m = hx_h2f##SFX(wb + 2) * hx_h2f##SFX(xb + 2);                                    \
		sumf += a + m;                                                                  \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q5_0##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	for (int ib = 0; ib < nb; ib++) {                                                   \
		const uint8_t *wb = w + ib * 22, *xb = x + ib * 34; const int8_t *xq = (const int8_t *)(xb + 2); \
		uint32_t qh = hx_u32(wb + 2);                                                   \
		int32_t s0 = 0, s1 = 0;                                                         \
		for (int j = 0; j < 16; j++) {                                                  \
			int32_t h0 = (int32_t)((qh >> j) & 1) << 4, h1 = (int32_t)((qh >> (j + 16)) & 1) << 4; \
			s0 += (((int32_t)(wb[6 + j] & 0x0F) | h0) - 16) * xq[j];                    \
			s1 += (((int32_t)(wb[6 + j] >> 4) | h1) - 16) * xq[16 + j];                 \
		}                                                                               \
		float dd = hx_h2f##SFX(wb) * hx_h2f##SFX(xb);                                           \
		sumf += dd * (float)(s0 + s1);                                                  \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q5_1##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	for (int ib = 0; ib < nb; ib++) {                                                   \
		const uint8_t *wb = w + ib * 24, *xb = x + ib * 36; const int8_t *xq = (const int8_t *)(xb + 4); \
		uint32_t qh = hx_u32(wb + 4);                                                   \
		int32_t s0 = 0, s1 = 0;                                                         \
		for (int j = 0; j < 16; j++) {                                                  \
			int32_t h0 = (int32_t)((qh >> j) & 1) << 4, h1 = (int32_t)((qh >> (j + 16)) & 1) << 4; \
			s0 += ((int32_t)(wb[8 + j] & 0x0F) | h0) * xq[j];                           \
			s1 += ((int32_t)(wb[8 + j] >> 4) | h1) * xq[16 + j];                        \
		}                                                                               \
		float dd = hx_h2f##SFX(wb) * hx_h2f##SFX(xb);                                           \
		float a = dd * (float)(s0 + s1);                                                \
		float m = hx_h2f##SFX(wb + 2) * hx_h2f##SFX(xb + 2);                                    \
		sumf += a + m;                                                                  \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static __attribute__((unused)) float hx_dot_q8_0_gen##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	for (int ib = 0; ib < nb; ib++) {                                                   \
		const uint8_t *wb = w + ib * 34, *xb = x + ib * 34;                             \
		const int8_t *wq = (const int8_t *)(wb + 2), *xq = (const int8_t *)(xb + 2);    \
		int32_t s = 0;                                                                  \
		for (int j = 0; j < 32; j++) s += (int32_t)wq[j] * xq[j];                       \
		float dd = hx_h2f##SFX(wb) * hx_h2f##SFX(xb);                                           \
		sumf += (float)s * dd;                                                          \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q2_k##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sumf = 0;                                                                     \
	int8_t a[256]; int32_t scales[16];                                                  \
	for (int i = 0; i < nb; i++) {                                                      \
		const uint8_t *wb = w + i * 84, *xb = x + i * 292;                              \
		int32_t summs = 0;                                                              \
		for (int j = 0; j < 16; j++) {                                                  \
			summs += (int32_t)hx_i16(xb + 260 + 2 * j) * (wb[j] >> 4);                  \
			scales[j] = wb[j] & 0xF;                                                    \
		}                                                                               \
		for (int n = 0; n < 2; n++)                                                     \
			for (int g = 0; g < 4; g++)                                                 \
				for (int l = 0; l < 32; l++)                                            \
					a[128 * n + 32 * g + l] = (int8_t)((wb[16 + 32 * n + l] >> (2 * g)) & 3); \
		int32_t aux[8] = {0};                                                           \
		hx_lane16##SFX(aux, a, (const int8_t *)(xb + 4), scales);                      \
		int32_t isum = aux[0] + aux[1] + aux[2] + aux[3] + aux[4] + aux[5] + aux[6] + aux[7]; \
		float yd = hx_f32(xb);                                                          \
		float dall = yd * hx_h2f##SFX(wb + 80), dmin = yd * hx_h2f##SFX(wb + 82);               \
		float t1 = dall * (float)isum, t2 = dmin * (float)summs;                        \
		sumf += t1 - t2;                                                                \
	}                                                                                   \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q3_k##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sums[8] = {0};                                                                \
	int8_t a[256]; int32_t scales[16];                                                  \
	for (int i = 0; i < nb; i++) {                                                      \
		const uint8_t *wb = w + i * 110, *xb = x + i * 292;                             \
		for (int n = 0; n < 2; n++)                                                     \
			for (int g = 0; g < 4; g++) {                                               \
				uint8_t m = (uint8_t)(1u << (4 * n + g));                               \
				for (int l = 0; l < 32; l++) {                                          \
					int8_t v = (int8_t)((wb[32 + 32 * n + l] >> (2 * g)) & 3);          \
					a[128 * n + 32 * g + l] = (int8_t)(v - ((wb[l] & m) ? 0 : 4));     \
				}                                                                       \
			}                                                                           \
		hx_q3_scales(wb + 96, scales);                                                  \
		int32_t aux[8] = {0};                                                           \
		hx_lane16##SFX(aux, a, (const int8_t *)(xb + 4), scales);                      \
		float d = hx_h2f##SFX(wb + 108) * hx_f32(xb);                                       \
		for (int l = 0; l < 8; l++) sums[l] += d * (float)aux[l];                      \
	}                                                                                   \
	float sumf = 0;                                                                     \
	for (int l = 0; l < 8; l++) sumf += sums[l];                                        \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float dot_k45##SFX(const uint8_t *w, const uint8_t *x, int nb, int q5) {    \
	float sums[8] = {0}; float sumf = 0;                                                \
	int8_t a[256]; int32_t scales[16];                                                  \
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;                                \
	for (int i = 0; i < nb; i++) {                                                      \
		const uint8_t *wb = w + i * bsz, *xb = x + i * 292;                             \
		for (int j = 0; j < 4; j++) {                                                   \
			const uint8_t *q = wb + qoff + 32 * j;                                      \
			for (int l = 0; l < 32; l++) {                                              \
				a[64 * j + l] = (int8_t)(q[l] & 0xF);                                   \
				a[64 * j + 32 + l] = (int8_t)(q[l] >> 4);                               \
			}                                                                           \
			if (q5) {                                                                   \
				const uint8_t *qh = wb + 16;                                            \
				uint8_t u1 = (uint8_t)(1u << (2 * j)), u2 = (uint8_t)(2u << (2 * j));   \
				for (int l = 0; l < 32; l++) {                                          \
					a[64 * j + l] += (qh[l] & u1) ? 16 : 0;                             \
					a[64 * j + 32 + l] += (qh[l] & u2) ? 16 : 0;                        \
				}                                                                       \
			}                                                                           \
		}                                                                               \
		int32_t mn[8];                                                                  \
		for (int j = 0; j < 8; j++) {                                                   \
			int32_t s, m; hx_scale_min_k4(j, wb + 4, &s, &m);                           \
			scales[2 * j] = s; scales[2 * j + 1] = s; mn[j] = m;                        \
		}                                                                               \
		int32_t sumi = 0;                                                               \
		for (int j = 0; j < 16; j++) sumi += (int32_t)hx_i16(xb + 260 + 2 * j) * mn[j / 2]; \
		int32_t aux[8] = {0};                                                           \
		hx_lane16##SFX(aux, a, (const int8_t *)(xb + 4), scales);                      \
		float yd = hx_f32(xb);                                                          \
		float d = hx_h2f##SFX(wb) * yd;                                                     \
		for (int l = 0; l < 8; l++) sums[l] += d * (float)aux[l];                      \
		float dmin = hx_h2f##SFX(wb + 2) * yd;                                              \
		sumf -= dmin * (float)sumi;                                                     \
	}                                                                                   \
	for (int l = 0; l < 8; l++) sumf += sums[l];                                        \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_q4_k##SFX(const uint8_t *w, const uint8_t *x, int nb) { return dot_k45##SFX(w, x, nb, 0); } \
ATTR static float hx_dot_q5_k##SFX(const uint8_t *w, const uint8_t *x, int nb) { return dot_k45##SFX(w, x, nb, 1); } \
ATTR static float hx_dot_q6_k##SFX(const uint8_t *w, const uint8_t *x, int nb) {               \
	float sums[8] = {0};                                                                \
	int8_t a[256]; int32_t scales[16];                                                  \
	for (int i = 0; i < nb; i++) {                                                      \
		const uint8_t *wb = w + i * 210, *xb = x + i * 292;                             \
		for (int h = 0; h < 2; h++) {                                                   \
			const uint8_t *ql = wb + 64 * h, *qh = wb + 128 + 32 * h;                   \
			int8_t *o = a + 128 * h;                                                    \
			for (int l = 0; l < 32; l++) {                                              \
				uint8_t hb = qh[l];                                                     \
				o[l] = (int8_t)((ql[l] & 0xF) | ((hb & 3) << 4)) - 32;                  \
				o[l + 32] = (int8_t)((ql[l + 32] & 0xF) | (((hb >> 2) & 3) << 4)) - 32; \
				o[l + 64] = (int8_t)((ql[l] >> 4) | (((hb >> 4) & 3) << 4)) - 32;       \
				o[l + 96] = (int8_t)((ql[l + 32] >> 4) | (((hb >> 6) & 3) << 4)) - 32;  \
			}                                                                           \
		}                                                                               \
		for (int j = 0; j < 16; j++) scales[j] = (int8_t)wb[192 + j];                   \
		int32_t aux[8] = {0};                                                           \
		hx_lane16##SFX(aux, a, (const int8_t *)(xb + 4), scales);                      \
		float d = hx_h2f##SFX(wb + 208) * hx_f32(xb);                                       \
		for (int l = 0; l < 8; l++) sums[l] += d * (float)aux[l];                      \
	}                                                                                   \
	float sumf = 0;                                                                     \
	for (int l = 0; l < 8; l++) sumf += sums[l];                                        \
	return sumf;                                                                        \
}                                                                                       \
ATTR static float hx_dot_f32##SFX(const uint8_t *w, const uint8_t *x, int n) {          \
	double sum = 0;                                                                     \
	for (int i = 0; i < n; i++) sum += (double)(hx_f32(w + 4 * i) * hx_f32(x + 4 * i)); \
	return (float)sum;                                                                  \
}                                                                                       \
ATTR static float hx_dot_f16##SFX(const uint8_t *w, const uint8_t *x, int n) {          \
	double sum = 0;                                                                     \
	for (int i = 0; i < n; i++) sum += (double)(hx_h2f##SFX(w + 2 * i) * hx_h2f##SFX(x + 2 * i)); \
	return (float)sum;                                                                  \
}                                                                                       \
ATTR static float hx_dot_bf16##SFX(const uint8_t *w, const uint8_t *x, int n) {         \
	double sum = 0;                                                                     \
	for (int i = 0; i < n; i++) sum += (double)(hx_bf16(w + 2 * i) * hx_bf16(x + 2 * i)); \
	return (float)sum;                                                                  \
}                                                                                       \
ATTR static void hx_rows##SFX(int type, const uint8_t *w, size_t rb, int nrows,         \
                              const uint8_t *x, int n, float *out) {                    \
	switch (type) {                                                                     \
	case HX_F32:  HX_FROWS(hx_f32, 4, hx_dot_f32##SFX)                                  \
	case HX_F16:  HX_FROWS(hx_h2f##SFX, 2, hx_dot_f16##SFX)                             \
	case HX_BF16: HX_FROWS(hx_bf16, 2, hx_dot_bf16##SFX)                                \
	case HX_Q4_0: HX_ROWS(hx_q4_0##SFX, n / 32)                                         \
	case HX_Q4_1: HX_ROWS(hx_dot_q4_1##SFX, n / 32)                                     \
	case HX_Q5_0: HX_ROWS(hx_dot_q5_0##SFX, n / 32)                                     \
	case HX_Q5_1: HX_ROWS(hx_dot_q5_1##SFX, n / 32)                                     \
	case HX_Q8_0: HX_ROWS(hx_q8_0##SFX, n / 32)                                         \
	case HX_Q2_K: HX_ROWS(hx_dot_q2_k##SFX, n / 256)                                    \
	case HX_Q3_K: HX_ROWS(hx_dot_q3_k##SFX, n / 256)                                    \
	case HX_Q4_K: HX_ROWS(hx_dot_q4_k##SFX, n / 256)                                    \
	case HX_Q5_K: HX_ROWS(hx_dot_q5_k##SFX, n / 256)                                    \
	case HX_Q6_K: HX_ROWS(hx_dot_q6_k##SFX, n / 256)                                    \
	default: for (int r = 0; r < nrows; r++) out[r] = __builtin_nanf("");               \
	}                                                                                   \
}

// HX_FROWS is the case of a float type: eight rows at a time, each summed
// in its own double accumulator in element order exactly as the one-row
// kernel (single) does, so the eight dependency chains overlap; the rest
// of the rows one by one.
#define HX_FROWS(load, esz, single) {                                                        \
	int r = 0;                                                                              \
	for (; r + 8 <= nrows; r += 8) {                                                        \
		const uint8_t *w0 = w + (size_t)r * rb;                                             \
		double s[8] = {0};                                                                  \
		for (int i = 0; i < n; i++) {                                                       \
			float xv = load(x + (esz) * i);                                                 \
			for (int k = 0; k < 8; k++) s[k] += (double)(load(w0 + (size_t)k * rb + (esz) * i) * xv); \
		}                                                                                   \
		for (int k = 0; k < 8; k++) out[r + k] = (float)s[k];                               \
	}                                                                                       \
	for (; r < nrows; r++) out[r] = single(w + (size_t)r * rb, x, n);                      \
	break;                                                                                  \
}

// HX_ROWS is one case of hx_rows: the row loop around one kernel.
#define HX_ROWS(fn, cnt) { for (int r = 0; r < nrows; r++) out[r] = fn(w + (size_t)r * rb, x, cnt); break; }

#define hx_h2f_base hx_fp16
#define hx_q8_0_base hx_dot_q8_0_gen_base
#define hx_q4_0_base hx_dot_q4_0_gen_base
#define hx_lane16_base hx_lane_dot16_ref
HX_KERNELS(_base, )

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

// hx_dot_q8_0_simd is hx_dot_q8_0 with the block's integer dot product in
// AVX2 (sign-extended to 16 bits, so exact for every byte value) and the
// float operations unchanged.
HX_AVX2 static float hx_dot_q8_0_simd(const uint8_t *w, const uint8_t *x, int nb) {
	float sumf = 0;
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + ib * 34, *xb = x + ib * 34;
		__m256i a = _mm256_loadu_si256((const __m256i *)(wb + 2));
		__m256i b = _mm256_loadu_si256((const __m256i *)(xb + 2));
		__m256i lo = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(a)),
		                               _mm256_cvtepi8_epi16(_mm256_castsi256_si128(b)));
		__m256i hi = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(a, 1)),
		                               _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1)));
		int32_t s = hx_hsum8(_mm256_add_epi32(lo, hi));
		float dd = hx_h2f_avx2(wb) * hx_h2f_avx2(xb);
		sumf += (float)s * dd;
	}
	return sumf;
}

// hx_dot_q4_0_simd is hx_dot_q4_0 with the integer dot product in AVX2.
HX_AVX2 static float hx_dot_q4_0_simd(const uint8_t *w, const uint8_t *x, int nb) {
	const __m256i low = _mm256_set1_epi16(0x0F), eight = _mm256_set1_epi16(8);
	float sumf = 0;
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + ib * 18; const uint8_t *xq = x + ib * 34 + 2;
		__m256i q = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(wb + 2)));
		__m256i a0 = _mm256_sub_epi16(_mm256_and_si256(q, low), eight);
		__m256i a1 = _mm256_sub_epi16(_mm256_srli_epi16(q, 4), eight);
		__m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)xq));
		__m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xq + 16)));
		int32_t s = hx_hsum8(_mm256_add_epi32(_mm256_madd_epi16(a0, y0), _mm256_madd_epi16(a1, y1)));
		float p = (float)s * hx_h2f_avx2(wb);
		sumf += p * hx_h2f_avx2(x + ib * 34);
	}
	return sumf;
}

#define hx_q8_0_avx2 hx_dot_q8_0_simd
#define hx_q4_0_avx2 hx_dot_q4_0_simd
#define hx_lane16_avx2 hx_lane_dot16_simd
HX_KERNELS(_avx2, HX_AVX2)

// __builtin_cpu_supports reads the CPU model that libgcc fills in from a
// constructor before any Go code can call in here.
void hx_dot_rows(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, int n, float *out) {
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) hx_rows_avx2(type, w, row_bytes, nrows, x, n, out);
	else hx_rows_base(type, w, row_bytes, nrows, x, n, out);
}
float hx_dot(int type, const uint8_t *w, const uint8_t *x, int n) {
	float out;
	hx_dot_rows(type, w, 0, 1, x, n, &out);
	return out;
}
int hx_simd(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"); }
#else
int hx_simd(void) { return 0; }
void hx_dot_rows(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, int n, float *out) {
	hx_rows_base(type, w, row_bytes, nrows, x, n, out);
}
float hx_dot(int type, const uint8_t *w, const uint8_t *x, int n) {
	float out;
	hx_rows_base(type, w, 0, 1, x, n, &out);
	return out;
}
#endif

// hx_dot_rows_base runs the baseline kernels whatever the CPU (tests).
void hx_dot_rows_base(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, int n, float *out) {
	hx_rows_base(type, w, row_bytes, nrows, x, n, out);
}
