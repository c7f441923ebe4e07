//go:build cgo && !purego

// The AVX2 Q4_K/Q5_K tile of eight activation rows (see kernels_avx2.c,
// which dispatches to it, and kernels_avx2_k4.c for the float sums it
// shares with the other Q4_K/Q5_K kernels).

#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_avx2.h"
#include "kernels_k4.h"

// hx_il8_values writes the values of the Q8_K blocks at offset o of the
// eight activation rows at x (xs bytes apart) interleaved for the tiles of
// eight: for each 32 values s, each four bytes kk of their first sixteen
// and each half t of the rows (0-3, 4-7), one vector of the four rows'
// bytes 4kk..4kk+3, then of their bytes 16+4kk..16+4kk+3 (a 4×4
// transpose of 32-bit words in each 128-bit lane).
HX_A2 void hx_il8_values(int8_t *q, const uint8_t *x, size_t xs, size_t o) {
	for (int s = 0; s < 8; s++)
		for (int t = 0; t < 2; t++) {
			__m256i r[4];
			for (int k = 0; k < 4; k++) r[k] = _mm256_loadu_si256((const __m256i *)(x + (size_t)(4 * t + k) * xs + o + 4 + 32 * s));
			const __m256i l01 = _mm256_unpacklo_epi32(r[0], r[1]), h01 = _mm256_unpackhi_epi32(r[0], r[1]);
			const __m256i l23 = _mm256_unpacklo_epi32(r[2], r[3]), h23 = _mm256_unpackhi_epi32(r[2], r[3]);
			int8_t *qs = q + 256 * s + 32 * t;
			_mm256_store_si256((__m256i *)qs, _mm256_unpacklo_epi64(l01, l23));
			_mm256_store_si256((__m256i *)(qs + 64), _mm256_unpackhi_epi64(l01, l23));
			_mm256_store_si256((__m256i *)(qs + 128), _mm256_unpacklo_epi64(h01, h23));
			_mm256_store_si256((__m256i *)(qs + 192), _mm256_unpackhi_epi64(h01, h23));
		}
}

// hx_k4il_fill writes a, the side table entry of block ib of the eight
// Q8_K activation rows at x (xs bytes apart): hx_il8_values, the sums of
// the sub-blocks and the scales.
HX_A2 void hx_k4il_fill(hx_k4il *a, const uint8_t *x, size_t xs, int ib) {
	const size_t o = (size_t)ib * 292;
	hx_il8_values(a->q, x, xs, o);
	for (int j = 0; j < 8; j++) {
		const uint8_t *xb = x + (size_t)j * xs + o;
		const __m256i bs = _mm256_loadu_si256((const __m256i *)(xb + 260));
		_Alignas(16) int16_t ps[8]; // the sums of the eight sub-blocks
		_mm_store_si128((__m128i *)ps, _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
		for (int p = 0; p < 4; p++) a->bs[p][2 * j] = ps[2 * p], a->bs[p][2 * j + 1] = ps[2 * p + 1];
		a->dy[j] = hx_f32(xb);
	}
}

// HX_K4IL_SUB adds sub-block sb (its values W, 32 bytes) times the eight
// rows to T0 (rows 0-3) and T1 (4-7). vpshufd spreads W's bytes 4kk..4kk+3
// and 16+4kk.. over the halves of a vector, as the side table holds the
// rows' values; four vpmaddubsw a half of the rows are summed in 16 bits
// (exact: at most 4·2·31·128 for Q5_K) before one vpmaddwd by the
// sub-block's scale, where the one-row tiles need one vpmaddwd for each.
#define HX_K4IL_SUB(W, sb) \
	do { \
		const int8_t *xs_ = xq + 256 * (sb); \
		const __m256i sc = _mm256_set1_epi32((int)p->s[sb]); \
		const __m256i w0 = _mm256_shuffle_epi32(W, 0x00), w1 = _mm256_shuffle_epi32(W, 0x55); \
		const __m256i w2 = _mm256_shuffle_epi32(W, 0xAA), w3 = _mm256_shuffle_epi32(W, 0xFF); \
		for (int t = 0; t < 2; t++) { \
			const int8_t *xt = xs_ + 32 * t; \
			__m256i a16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, _mm256_load_si256((const __m256i *)xt)), \
			                               _mm256_maddubs_epi16(w1, _mm256_load_si256((const __m256i *)(xt + 64)))); \
			a16 = _mm256_add_epi16(a16, _mm256_add_epi16(_mm256_maddubs_epi16(w2, _mm256_load_si256((const __m256i *)(xt + 128))), \
			                                             _mm256_maddubs_epi16(w3, _mm256_load_si256((const __m256i *)(xt + 192))))); \
			if (t == 0) \
				T0 = _mm256_add_epi32(T0, _mm256_madd_epi16(a16, sc)); \
			else \
				T1 = _mm256_add_epi32(T1, _mm256_madd_epi16(a16, sc)); \
		} \
		HX_PIN(T0); \
		HX_PIN(T1); \
	} while (0)

// hx_a_k4_il: one Q4_K/Q5_K weight row (its blocks' scales from wp's
// table, or decoded here) times eight activation rows from hx_k4il_fill's
// table. T0 and T1 hold four rows' sums of each sub-block's first and
// second sixteen values in their two halves; a block's eight T and eight
// M (the mins' term, four vpmaddwd) end in one vector each, converted and
// added with one FMA each for the eight rows.
HX_A2 static inline __attribute__((always_inline)) void hx_a_k4_il(const uint8_t *w, const hx_k4w *wp, const hx_k4il *xa, int nb, float *out,
                                                                   size_t os, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	__m256 acc = _mm256_setzero_ps(), accm = acc;
	_Alignas(32) hx_k4w own;
	for (int i = 0; i < nb; i++) {
		HX_K4_BLOCK;
		const int8_t *xq = xa[i].q;
		__m256i T0 = _mm256_setzero_si256(), T1 = T0;
		for (int c = 0; c < 4; c++) {
			__m256i lo, hi;
			hx_k4_chunk(wb + qoff + 32 * c, qh, c, q5, &lo, &hi);
			HX_K4IL_SUB(lo, 2 * c);
			HX_K4IL_SUB(hi, 2 * c + 1);
		}
		const __m256i T = _mm256_add_epi32(_mm256_permute2x128_si256(T0, T1, 0x20), _mm256_permute2x128_si256(T0, T1, 0x31));
		__m256i M = _mm256_setzero_si256();
		for (int q = 0; q < 4; q++) {
			int32_t m2;
			memcpy(&m2, p->m + 2 * q, 4);
			M = _mm256_add_epi32(M, _mm256_madd_epi16(_mm256_set1_epi32(m2), _mm256_load_si256((const __m256i *)xa[i].bs[q])));
		}
		const __m256 dy = _mm256_load_ps(xa[i].dy);
		acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(T), _mm256_mul_ps(_mm256_broadcast_ss(p->dm), dy), acc);
		accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_mul_ps(_mm256_broadcast_ss(p->dm + 1), dy), accm);
	}
	_Alignas(32) float r[8];
	_mm256_store_ps(r, _mm256_sub_ps(acc, accm));
	for (int j = 0; j < 8; j++) out[(size_t)j * os] = r[j];
}

HX_A2 __attribute__((noinline)) void hx_a_q4_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os) {
	hx_a_k4_il(w, (const hx_k4w *)wp, (const hx_k4il *)xa, nb, out, os, 0);
}
HX_A2 __attribute__((noinline)) void hx_a_q5_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os) {
	hx_a_k4_il(w, (const hx_k4w *)wp, (const hx_k4il *)xa, nb, out, os, 1);
}
#endif
