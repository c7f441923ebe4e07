//go:build cgo && !purego

// The AVX2 Q6_K tile of eight activation rows (see kernels_avx2.c, which
// dispatches to it and holds the other Q6_K kernels, whose float sums it
// shares).

#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_avx2.h"

// hx_q6il_fill writes a, the side table entry of block ib of the eight
// Q8_K activation rows at x (xs bytes apart): hx_il8_values, the sums of
// sixteen values (for the 32·x term) and the scales.
HX_A2 void hx_q6il_fill(hx_q6il *a, const uint8_t *x, size_t xs, int ib) {
	const size_t o = (size_t)ib * 292;
	hx_il8_values(a->q, x, xs, o);
	for (int j = 0; j < 8; j++) {
		const uint8_t *xb = x + (size_t)j * xs + o;
		int16_t bs[16];
		memcpy(bs, xb + 260, sizeof bs);
		for (int p = 0; p < 8; p++) a->bs[p][2 * j] = bs[2 * p], a->bs[p][2 * j + 1] = bs[2 * p + 1];
		a->dy[j] = hx_f32(xb);
	}
}

// HX_Q6IL_CHUNK adds values 32·ch to 32·ch+31 of the block (Q, unsigned
// 6-bit) times the eight rows to T0 (rows 0-3) and T1 (4-7), their first
// sixteen (scale ch·2) in the low halves and the rest (ch·2+1) in the high
// ones. Two vpmaddubsw are summed in 16 bits (exact: 2·2·63·128) before
// each vpmaddwd by the scales.
#define HX_Q6IL_CHUNK(Q, ch) \
	do { \
		const int8_t *xc = xq + 256 * (ch); \
		const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(s16[2 * (ch) + 1]), _mm_set1_epi16(s16[2 * (ch)])); \
		const __m256i w0 = _mm256_shuffle_epi32(Q, 0x00), w1 = _mm256_shuffle_epi32(Q, 0x55); \
		const __m256i w2 = _mm256_shuffle_epi32(Q, 0xAA), w3 = _mm256_shuffle_epi32(Q, 0xFF); \
		for (int t = 0; t < 2; t++) { \
			const int8_t *xt = xc + 32 * t; \
			const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(w0, _mm256_load_si256((const __m256i *)xt)), \
			                                   _mm256_maddubs_epi16(w1, _mm256_load_si256((const __m256i *)(xt + 64)))); \
			const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(w2, _mm256_load_si256((const __m256i *)(xt + 128))), \
			                                   _mm256_maddubs_epi16(w3, _mm256_load_si256((const __m256i *)(xt + 192)))); \
			const __m256i ab = _mm256_add_epi32(_mm256_madd_epi16(a, sc), _mm256_madd_epi16(b, sc)); \
			if (t == 0) \
				T0 = _mm256_add_epi32(T0, ab); \
			else \
				T1 = _mm256_add_epi32(T1, ab); \
		} \
		HX_PIN(T0); \
		HX_PIN(T1); \
	} while (0)

// hx_a_q6_k_il: one Q6_K weight row times eight activation rows from
// hx_q6il_fill's table. T sums scale·value·x for the eight rows (the
// values unsigned) and M 32·scale·x over the sixteen-value sub-blocks
// (eight vpmaddwd); T − M is the pair's exact block sum of
// scale·(value − 32)·x, the integer the one-row kernels reach their own
// way, added times d·dy with one FMA for the eight rows.
HX_A2 __attribute__((noinline)) void hx_a_q6_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os) {
	(void)wp;
	const hx_q6il *xi = (const hx_q6il *)xa;
	const __m256i lo4 = _mm256_set1_epi8(0x0F), hi2 = _mm256_set1_epi8(0x30);
	__m256 acc = _mm256_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const uint8_t *wb = w + (size_t)i * 210;
		_Alignas(32) int16_t s16[16];
		_mm256_store_si256((__m256i *)s16, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + 192))));
		const int8_t *xq = xi[i].q;
		__m256i T0 = _mm256_setzero_si256(), T1 = T0;
		for (int h = 0; h < 2; h++) {
			const __m256i l0 = _mm256_loadu_si256((const __m256i *)(wb + 64 * h));
			const __m256i l1 = _mm256_loadu_si256((const __m256i *)(wb + 64 * h + 32));
			const __m256i hb = _mm256_loadu_si256((const __m256i *)(wb + 128 + 32 * h));
			const __m256i q0 = _mm256_or_si256(_mm256_and_si256(l0, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), hi2));
			const __m256i q1 = _mm256_or_si256(_mm256_and_si256(l1, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), hi2));
			const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), lo4), _mm256_and_si256(hb, hi2));
			const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), lo4), _mm256_and_si256(_mm256_srli_epi16(hb, 2), hi2));
			HX_Q6IL_CHUNK(q0, 4 * h);
			HX_Q6IL_CHUNK(q1, 4 * h + 1);
			HX_Q6IL_CHUNK(q2, 4 * h + 2);
			HX_Q6IL_CHUNK(q3, 4 * h + 3);
		}
		const __m256i T = _mm256_add_epi32(_mm256_permute2x128_si256(T0, T1, 0x20), _mm256_permute2x128_si256(T0, T1, 0x31));
		__m256i M = _mm256_setzero_si256();
		for (int p = 0; p < 8; p++) {
			int32_t s2;
			memcpy(&s2, s16 + 2 * p, 4);
			M = _mm256_add_epi32(M, _mm256_madd_epi16(_mm256_set1_epi32(s2), _mm256_load_si256((const __m256i *)xi[i].bs[p])));
		}
		const __m256i I = _mm256_sub_epi32(T, _mm256_slli_epi32(M, 5));
		acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(_mm256_set1_ps(hx_h2f_avx2(wb + 208)), _mm256_load_ps(xi[i].dy)), acc);
	}
	_Alignas(32) float r[8];
	_mm256_store_ps(r, acc);
	for (int j = 0; j < 8; j++) out[(size_t)j * os] = r[j];
}
#endif
