//go:build cgo && !purego

// The AVX2 Q4_K and Q5_K kernels (see kernels_avx2.c, which dispatches to
// them): one weight row times one to four activation rows, and two weight
// rows times one activation row for decode. The tile of eight rows is in
// kernels_avx2_k4il.c.

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
	a->dy = hx_f32(xb);
}

// The float sums of the AVX2 Q4_K/Q5_K kernels: for each (weight row,
// activation row) pair and block, T (the scaled sub-block dot products)
// and M (the mins times the activations' sub-block sums) are summed
// exactly to one 32-bit integer each, then T·(d·dy) and M·(dmin·dy) are
// added to the pair's two float sums with one FMA each, and the result
// is the first sum minus the second. Every kernel (decode, partial tiles,
// the tiles of four and eight) does the same operations for a pair, so a
// row gives the same bits however it is batched. (ggml's AVX2 kernel
// keeps eight float lanes for T and four for M, and converts all twelve
// every block.)

// hx_k4_tm2 sums the eight lanes of t0 and t1 and the four of p0 and p1:
// [T0 T1 M0 M1], exact.
HX_A2 static inline __m128i hx_k4_tm2(__m256i t0, __m256i t1, __m128i p0, __m128i p1) {
	const __m256i u = _mm256_add_epi32(_mm256_unpacklo_epi32(t0, t1), _mm256_unpackhi_epi32(t0, t1));
	const __m128i tt = _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
	const __m128i pp = _mm_add_epi32(_mm_unpacklo_epi32(p0, p1), _mm_unpackhi_epi32(p0, p1));
	return _mm_add_epi32(_mm_unpacklo_epi64(tt, pp), _mm_unpackhi_epi64(tt, pp));
}

// hx_k4_dm2 turns (d, dmin, 0, 0) into (d, 0, dmin, 0), the factors'
// places in hx_k4_tm2's vector for one pair.
HX_A2 static inline __m128 hx_k4_dm2(__m128 dm) { return _mm_unpacklo_ps(dm, _mm_setzero_ps()); }

// hx_k4_out writes n results of acc, laid out as hx_k4_tm2's vector
// ([T sums | M sums], two lanes each), to out, out + os.
HX_A2 static inline void hx_k4_out(__m128 acc, float *out, size_t os, int n) {
	const __m128 r = _mm_sub_ps(acc, _mm_movehl_ps(acc, acc));
	out[0] = _mm_cvtss_f32(r);
	if (n == 2) out[os] = _mm_cvtss_f32(_mm_shuffle_ps(r, r, 1));
}

// Q4_K (144-byte blocks of 256; Q5_K: 176 bytes with a fifth bit per value
// in 32 bytes of qh) times Q8_K activations (292 bytes: float scale, 256
// int8, 16 int16 sums of 16). Chunk c of 32 weight bytes holds sub-block 2c
// in its low nibbles and 2c+1 in its high ones. The integer sums are
// ggml's AVX2 ones (vpmaddubsw, vpmaddwd by the sub-block's scale, eight
// 32-bit lanes); the float sums are the ones described above.
//
// With nr = 2 (one activation row, decode) the body takes two weight rows
// (w and w + rb, their results at out and out + ro) side by side, as the
// Q8_0 one does, and decodes the blocks' scales itself; with nr = 1 (a
// tile) it reads them from wp, hx_k4w_fill's table for the row.
HX_A2 static inline __attribute__((always_inline)) void hx_a_q4_k_body(const uint8_t *w, const hx_k4w *wp, size_t rb, size_t ro, int nr,
                                                                       const hx_k8a *xa, int nx, int nb, float *out, size_t os, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	__m128 acc[HX_AN]; // lane 0: the sum of T·d·dy, lane 1: of M·dmin·dy (nr = 2: [T0 T1 M0 M1])
	for (int k = 0; k < nr * nx; k++) acc[k] = _mm_setzero_ps();
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
		if (nr == 2) {
			// both rows' T and M in one vector, their four factors in another
			const __m128 dm0 = hx_k4_dm(w + (size_t)i * bsz), dm1 = hx_k4_dm(w + rb + (size_t)i * bsz);
			const __m128i p0 = _mm_madd_epi16(mins[0], _mm_load_si128((const __m128i *)xa[i].ps));
			const __m128i p1 = _mm_madd_epi16(mins[1], _mm_load_si128((const __m128i *)xa[i].ps));
			const __m128 f = _mm_mul_ps(_mm_unpacklo_ps(dm0, dm1), _mm_broadcast_ss(&xa[i].dy));
			acc[0] = _mm_fmadd_ps(_mm_cvtepi32_ps(hx_k4_tm2(t[0], t[1], p0, p1)), f, acc[0]);
			HX_PIN(acc[0]);
			continue;
		}
		const __m128 dm = wp ? _mm_load_ps(wp[i].dm) : hx_k4_dm(w + (size_t)i * bsz);
		for (int j = 0; j < nx; j++) {
			const hx_k8a *a = xa + (size_t)j * nb + i;
			const __m128i prod = _mm_madd_epi16(mins[0], _mm_load_si128((const __m128i *)a->ps));
			const __m128i tm = hx_k4_tm2(t[j], _mm256_setzero_si256(), prod, _mm_setzero_si128()); // [T 0 M 0]
			acc[j] = _mm_fmadd_ps(_mm_cvtepi32_ps(tm), _mm_mul_ps(hx_k4_dm2(dm), _mm_broadcast_ss(&a->dy)), acc[j]);
		}
	}
	if (nr == 2) {
		hx_k4_out(acc[0], out, ro, 2);
		return;
	}
	for (int j = 0; j < nx; j++) hx_k4_out(acc[j], out + (size_t)j * os, 0, 1);
}

// HX_K4T_ROW adds one activation row's (x) chunk c of block i times the
// chunk's decoded values (lo, hi) and scales (sl, sh) to t, for hx_a_k4_tile.
#define HX_K4T_ROW(t, x) \
	t = _mm256_add_epi32( \
	    t, _mm256_add_epi32(_mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *)((x)[i].q + 64 * c)))), \
	                        _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *)((x)[i].q + 64 * c + 32)))))); \
	HX_PIN(t)

// hx_a_k4_tile is hx_a_q4_k_body for four activation rows and one weight
// row, written out, with each block's scales, mins, d and dmin from hx_k4w
// (wp's table, or decoded here a block at a time when wp is null): the
// four rows' T folded into one vector, their M into another (two rows'
// mins lanes a vpmaddwd), so one conversion and one FMA each a block for
// the four.
HX_A2 static inline __attribute__((always_inline)) void hx_a_k4_tile(const uint8_t *w, const hx_k4w *wp, const hx_k8a *xa, int nb,
                                                                     float *out, size_t os, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	const hx_k8a *x0 = xa, *x1 = xa + nb, *x2 = xa + 2 * (size_t)nb, *x3 = xa + 3 * (size_t)nb;
	__m128 acc = _mm_setzero_ps(), accm = acc;
	_Alignas(32) hx_k4w own;
	for (int i = 0; i < nb; i++) {
		HX_K4_BLOCK;
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
		// T of the four rows, exact, and M: two rows' four mins lanes a vector
		const __m256i mins = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)p->m));
		const __m256i p01 = _mm256_madd_epi16(mins, _mm256_set_m128i(_mm_load_si128((const __m128i *)x1[i].ps), _mm_load_si128((const __m128i *)x0[i].ps)));
		const __m256i p23 = _mm256_madd_epi16(mins, _mm256_set_m128i(_mm_load_si128((const __m128i *)x3[i].ps), _mm_load_si128((const __m128i *)x2[i].ps)));
		const __m256i u = _mm256_add_epi32(_mm256_unpacklo_epi32(p01, p23), _mm256_unpackhi_epi32(p01, p23)); // rows 0, 2 | 1, 3
		const __m256i v = _mm256_add_epi32(u, _mm256_shuffle_epi32(u, 0x4E));
		const __m128i m = _mm_unpacklo_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
		const __m128 dy = _mm_setr_ps(x0[i].dy, x1[i].dy, x2[i].dy, x3[i].dy);
		acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hx_a2_fold4(t0, t1, t2, t3)), _mm_mul_ps(_mm_broadcast_ss(p->dm), dy), acc);
		accm = _mm_fmadd_ps(_mm_cvtepi32_ps(m), _mm_mul_ps(_mm_broadcast_ss(p->dm + 1), dy), accm);
	}
	_Alignas(16) float r[4];
	_mm_store_ps(r, _mm_sub_ps(acc, accm));
	for (int j = 0; j < 4; j++) out[(size_t)j * os] = r[j];
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
HX_AFN_K(hx_a_q4_k, HX_Q4_K_CALL, 1)
HX_AFN_K(hx_a_q4_k, HX_Q4_K_CALL, 2)
HX_AFN_K(hx_a_q4_k, HX_Q4_K_CALL, 3)
HX_AFN_K(hx_a_q4_k, HX_Q4_K_CALL, 4)
HX_AFN_K(hx_a_q5_k, HX_Q5_K_CALL, 1)
HX_AFN_K(hx_a_q5_k, HX_Q5_K_CALL, 2)
HX_AFN_K(hx_a_q5_k, HX_Q5_K_CALL, 3)
HX_AFN_K(hx_a_q5_k, HX_Q5_K_CALL, 4)
// 1 to 4 activation rows, and the tile of eight (kernels_avx2_k4il.c); five
// to seven run four and the rest
const hx_tfn hx_a_q4_k_k[HX_K4T + 1] = {0, hx_a_q4_k_1, hx_a_q4_k_2, hx_a_q4_k_3, hx_a_q4_k_4, 0, 0, 0, hx_a_q4_k_il};
const hx_tfn hx_a_q5_k_k[HX_K4T + 1] = {0, hx_a_q5_k_1, hx_a_q5_k_2, hx_a_q5_k_3, hx_a_q5_k_4, 0, 0, 0, hx_a_q5_k_il};

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
