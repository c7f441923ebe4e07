//go:build cgo && !purego

// The AVX2 Q4_K and Q5_K kernels (see kernels_avx2.c, which dispatches to
// them): one weight row times a tile of activation rows, and two weight
// rows times one activation row for decode.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_avx2.h"
#include "kernels_k4.h"

// hx_k8a_fill works out a's fields for the Q8_K block at xb.
HX_A2 void hx_k8a_fill(hx_k8a *a, const uint8_t *xb) {
	for (int c = 0; c < 8; c++) _mm256_store_si256((__m256i *)(a->q + 32 * c), _mm256_loadu_si256((const __m256i *)(xb + 4 + 32 * c)));
	const __m256i bs = _mm256_loadu_si256((const __m256i *)(xb + 260));
	_mm_store_si128((__m128i *)a->ps, _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
	const float dy = hx_f32(xb);
	_mm_store_ps(a->dy, _mm_setr_ps(dy, -dy, 0, 0));
}

// hx_k4_dm is the Q4_K/Q5_K block at wb's d and dmin (fp16) as floats
// (d, dmin, 0, 0).
HX_A2 static inline __m128 hx_k4_dm(const uint8_t *wb) {
	int32_t dmw;
	memcpy(&dmw, wb, 4);
	return _mm_cvtph_ps(_mm_cvtsi32_si128(dmw));
}

// hx_k4w_fill decodes the Q4_K/Q5_K block at wb into p.
HX_A2 static void hx_k4w_fill(hx_k4w *p, const uint8_t *wb) {
	const __m256i ms = _mm256_cvtepu8_epi16(hx_k4_scales(wb + 4)); // 8 scales, 8 mins as int16
	const __m128i sc = _mm256_castsi256_si128(ms);
	_mm_store_si128((__m128i *)p->s, _mm_unpacklo_epi16(sc, sc));
	_mm_store_si128((__m128i *)(p->s + 4), _mm_unpackhi_epi16(sc, sc));
	_mm_store_si128((__m128i *)p->m, _mm256_extracti128_si256(ms, 1));
	_mm_store_ps(p->dm, hx_k4_dm(wb));
}

// Q4_K (144-byte blocks of 256; Q5_K: 176 bytes with a fifth bit per value
// in 32 bytes of qh) times Q8_K activations (292 bytes: float scale, 256
// int8, 16 int16 sums of 16). Chunk c of 32 weight bytes holds sub-block 2c
// in its low nibbles and 2c+1 in its high ones. The sums are ggml's AVX2
// ones, lane for lane and in the same order (the mins' term in a
// four-lane accumulator of its own), so that helexa rounds as llama.cpp
// does on such a CPU.
//
// With nr = 2 (one activation row, decode) the body takes two weight rows
// (w and w + rb, their results at out and out + ro) side by side, as the
// Q8_0 one does, and decodes the blocks' scales itself; with nr = 1 (a
// tile) it reads them from wp, hx_k4w_fill's table for the row.
HX_A2 static inline __attribute__((always_inline)) void hx_a_q4_k_body(const uint8_t *w, const hx_k4w *wp, size_t rb, size_t ro, int nr,
                                                                       const hx_k8a *xa, int nx, int nb, float *out, size_t os, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	__m256 acc[HX_AN];
	__m128 accm[HX_AN];
	for (int k = 0; k < nr * nx; k++) {
		acc[k] = _mm256_setzero_ps();
		accm[k] = _mm_setzero_ps();
	}
	// each block's scales are decoded an iteration ahead, off the path from
	// the block's loads to its multiplies (alternated: DecodeRows Q4_K
	// +5 %, PrefillTile Q4_K +4 %)
	__m128i next[2];
	if (!wp)
		for (int r = 0; r < nr; r++) next[r] = hx_k4_scales(w + (size_t)r * rb + 4);
	for (int i = 0; i < nb; i++) {
		__m128i mins[2];
		__m256i scales[2], qh[2];
		for (int r = 0; r < nr; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * bsz;
			if (nr == 2) hx_a2_prefetch(wb, bsz);
			if (wp) {
				mins[r] = _mm_load_si128((const __m128i *)wp[i].m);
			} else {
				const __m256i ms = _mm256_cvtepu8_epi16(next[r]); // 8 scales, 8 mins as int16
				if (i + 1 < nb) next[r] = hx_k4_scales(wb + bsz + 4);
				const __m128i sc128 = _mm256_castsi256_si128(ms);
				mins[r] = _mm256_extracti128_si256(ms, 1);
				scales[r] = _mm256_set_m128i(sc128, sc128);
			}
			qh[r] = q5 ? _mm256_loadu_si256((const __m256i *)(wb + 16)) : _mm256_setzero_si256();
		}
		__m256i t[HX_AN];
		for (int k = 0; k < nr * nx; k++) t[k] = _mm256_setzero_si256();
		for (int c = 0; c < 4; c++) {
			for (int r = 0; r < nr; r++) {
				__m256i lo, hi;
				hx_k4_chunk(w + (size_t)r * rb + (size_t)i * bsz + qoff + 32 * c, qh[r], c, q5, &lo, &hi);
				// scale 2c (2c+1) in every int16 lane: bytes 4c, 4c+1 (4c+2, 4c+3)
				const __m256i sl = wp ? _mm256_set1_epi32((int)wp[i].s[2 * c])
				                      : _mm256_shuffle_epi8(scales[r], _mm256_set1_epi16((short)(((4 * c + 1) << 8) | (4 * c))));
				const __m256i sh = wp ? _mm256_set1_epi32((int)wp[i].s[2 * c + 1])
				                      : _mm256_shuffle_epi8(scales[r], _mm256_set1_epi16((short)(((4 * c + 3) << 8) | (4 * c + 2))));
				for (int j = 0; j < nx; j++) {
					const int8_t *xq = xa[(size_t)j * nb + i].q + 64 * c;
					const __m256i pl = _mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *)xq)));
					const __m256i ph = _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *)(xq + 32))));
					t[r * nx + j] = _mm256_add_epi32(t[r * nx + j], _mm256_add_epi32(pl, ph));
					HX_PIN(t[r * nx + j]);
				}
			}
		}
		for (int r = 0; r < nr; r++) {
			const __m128 dm = wp ? _mm_load_ps(wp[i].dm) : hx_k4_dm(w + (size_t)r * rb + (size_t)i * bsz);
			for (int j = 0; j < nx; j++) {
				const hx_k8a *a = xa + (size_t)j * nb + i;
				// dy·d and −dy·dmin in one multiply (the products
				// ggml's kernel forms one by one, to the same bits)
				const __m128 f = _mm_mul_ps(dm, _mm_load_ps(a->dy));
				// the sums of 32 (pairs of sums of 16) times the mins
				const __m128i prod = _mm_madd_epi16(mins[r], _mm_load_si128((const __m128i *)a->ps));
				accm[r * nx + j] = _mm_fmadd_ps(_mm_shuffle_ps(f, f, 0x55), _mm_cvtepi32_ps(prod), accm[r * nx + j]);
				acc[r * nx + j] = _mm256_fmadd_ps(_mm256_broadcastss_ps(f), _mm256_cvtepi32_ps(t[r * nx + j]), acc[r * nx + j]);
			}
		}
	}
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nx; j++) out[(size_t)j * os + (size_t)r * ro] = hx_a2_hsum(acc[r * nx + j]) + hx_a2_hsum4(accm[r * nx + j]);
}

// HX_K4T_ROW adds one activation row's (x) chunk c of block i times the
// chunk's decoded values (lo, hi) and scales (sl, sh) to t, for hx_a_k4_tile.
#define HX_K4T_ROW(t, x) \
	t = _mm256_add_epi32( \
	    t, _mm256_add_epi32(_mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *)((x)[i].q + 64 * c)))), \
	                        _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *)((x)[i].q + 64 * c + 32)))))); \
	HX_PIN(t)

// hx_a_k4_tile is hx_a_q4_k_body for a full tile of four activation rows
// and one weight row, written out, with each block's scales, mins, d and
// dmin from hx_k4w (wp's table, or decoded here a block at a time when wp
// is null). Its float work per block is what the body's was, lane for
// lane: d·dy (one multiply into eight lanes from two broadcasts), and the
// mins' term of two rows in one vector each (their four lanes side by
// side: (−dy)·dmin, vpmaddwd, the conversion and the FMA once for both),
// where the body spent a 128-bit multiply, two shuffles and three 128-bit
// operations a row, and spilled the mins' accumulators.
HX_A2 static inline __attribute__((always_inline)) void hx_a_k4_tile(const uint8_t *w, const hx_k4w *wp, const hx_k8a *xa, int nb,
                                                                     float *out, size_t os, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	const hx_k8a *x0 = xa, *x1 = xa + nb, *x2 = xa + 2 * (size_t)nb, *x3 = xa + 3 * (size_t)nb;
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, m01 = a0, m23 = a0;
	_Alignas(32) hx_k4w own;
	for (int i = 0; i < nb; i++) {
		const uint8_t *wb = w + (size_t)i * bsz;
		const hx_k4w *p = wp ? wp + i : &own;
		if (!wp) hx_k4w_fill(&own, wb);
		const __m256i qh = q5 ? _mm256_loadu_si256((const __m256i *)(wb + 16)) : _mm256_setzero_si256();
		__m256i t0 = _mm256_setzero_si256(), t1 = t0, t2 = t0, t3 = t0;
		for (int c = 0; c < 4; c++) {
			__m256i lo, hi;
			hx_k4_chunk(wb + qoff + 32 * c, qh, c, q5, &lo, &hi);
			const __m256i sl = _mm256_set1_epi32((int)p->s[2 * c]), sh = _mm256_set1_epi32((int)p->s[2 * c + 1]);
			HX_K4T_ROW(t0, x0);
			HX_K4T_ROW(t1, x1);
			HX_K4T_ROW(t2, x2);
			HX_K4T_ROW(t3, x3);
		}
		const __m256 d = _mm256_broadcast_ss(p->dm), dmin = _mm256_broadcast_ss(p->dm + 1);
		a0 = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_broadcast_ss(x0[i].dy)), _mm256_cvtepi32_ps(t0), a0);
		a1 = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_broadcast_ss(x1[i].dy)), _mm256_cvtepi32_ps(t1), a1);
		a2 = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_broadcast_ss(x2[i].dy)), _mm256_cvtepi32_ps(t2), a2);
		a3 = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_broadcast_ss(x3[i].dy)), _mm256_cvtepi32_ps(t3), a3);
		const __m256i mins = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)p->m));
		m01 = _mm256_fmadd_ps(_mm256_mul_ps(dmin, _mm256_set_m128(_mm_broadcast_ss(x1[i].dy + 1), _mm_broadcast_ss(x0[i].dy + 1))),
		                      _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, _mm256_set_m128i(_mm_load_si128((const __m128i *)x1[i].ps),
		                                                                                    _mm_load_si128((const __m128i *)x0[i].ps)))),
		                      m01);
		m23 = _mm256_fmadd_ps(_mm256_mul_ps(dmin, _mm256_set_m128(_mm_broadcast_ss(x3[i].dy + 1), _mm_broadcast_ss(x2[i].dy + 1))),
		                      _mm256_cvtepi32_ps(_mm256_madd_epi16(mins, _mm256_set_m128i(_mm_load_si128((const __m128i *)x3[i].ps),
		                                                                                    _mm_load_si128((const __m128i *)x2[i].ps)))),
		                      m23);
	}
	out[0] = hx_a2_hsum(a0) + hx_a2_hsum4(_mm256_castps256_ps128(m01));
	out[os] = hx_a2_hsum(a1) + hx_a2_hsum4(_mm256_extractf128_ps(m01, 1));
	out[2 * os] = hx_a2_hsum(a2) + hx_a2_hsum4(_mm256_castps256_ps128(m23));
	out[3 * os] = hx_a2_hsum(a3) + hx_a2_hsum4(_mm256_extractf128_ps(m23, 1));
}
#define HX_K4_CALL(k, q5) \
	(k) == HX_AN ? hx_a_k4_tile(w, (const hx_k4w *)wp, (const hx_k8a *)xa, nb, out, os, q5) \
	                         : hx_a_q4_k_body(w, (const hx_k4w *)wp, 0, 0, 1, (const hx_k8a *)xa, k, nb, out, os, q5)
#define HX_Q4_K_CALL(k) HX_K4_CALL(k, 0)
#define HX_Q5_K_CALL(k) HX_K4_CALL(k, 1)
// hx_a_q4_k_p, hx_a_q5_k_p (and kernels_avx2.c's hx_a_q6_k_p): two weight
// rows (w, w + rb) times one activation row, into out and out + ro.
HX_A2 __attribute__((noinline)) void hx_a_q4_k_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb,
                                                        float *out) {
	(void)x;
	hx_a_q4_k_body(w, 0, rb, ro, 2, (const hx_k8a *)xa, 1, nb, out, 0, 0);
}
HX_A2 __attribute__((noinline)) void hx_a_q5_k_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb,
                                                        float *out) {
	(void)x;
	hx_a_q4_k_body(w, 0, rb, ro, 2, (const hx_k8a *)xa, 1, nb, out, 0, 1);
}
HX_AFN_KQ(hx_a_q4_k, HX_Q4_K_CALL)
HX_AFN_KQ(hx_a_q5_k, HX_Q5_K_CALL)

// hx_k4w_table decodes the weight-side table of nrows Q4_K/Q5_K rows of nb
// blocks (rb bytes apart) into a buffer from the heap, or returns null.
HX_A2 hx_k4w *hx_k4w_table(int type, const uint8_t *w, size_t rb, int nrows, int nb) {
	hx_k4w *t = aligned_alloc(32, (size_t)nrows * (size_t)nb * sizeof(hx_k4w));
	if (!t) return 0;
	const int bsz = type == HX_Q5_K ? 176 : 144;
	for (int r = 0; r < nrows; r++)
		for (int ib = 0; ib < nb; ib++) hx_k4w_fill(t + (size_t)r * nb + ib, w + (size_t)r * rb + (size_t)ib * bsz);
	return t;
}
#endif
