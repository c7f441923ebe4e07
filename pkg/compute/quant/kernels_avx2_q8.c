//go:build cgo && !purego

// The AVX2 Q8_0 kernels (see kernels_avx2.c, which dispatches to them):
// one weight row times a tile of activation rows, four weight rows times
// one activation row for decode, and two weight rows times two or four
// for two and four streams.
//
// Q8_0 blocks are 34 bytes: an fp16 scale and 32 int8 values. The
// weights' signs move onto the activations (vpsignb) so that vpmaddubsw
// sees |w| unsigned (exact: the activations stay within ±127, so a pair
// sums to at most 2·128·127), then vpmaddwd by ones widens to 32-bit sums
// of four products. Every kernel sums each (weight row, activation row)
// pair's block in 32 bits, exactly, to one integer, and adds it times
// dw·dx to the pair's one float sum with one FMA, block by block. ggml's
// AVX2 kernel instead converts eight partial sums a block and keeps eight
// float lanes a row: four times the conversions and FMAs, which share the
// multiply pipes with vpmaddubsw and vpmaddwd. Since every kernel does the
// same operations for a pair, a row gives the same bits however it is
// batched.

#include <stdint.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_avx2.h"

// hx_q8_out writes the first n lanes of v to out, out + os, ...
HX_A2 static inline void hx_q8_out(__m256 v, float *out, size_t os, int n) {
	_Alignas(32) float r[8];
	_mm256_store_ps(r, v);
	for (int k = 0; k < n; k++) out[(size_t)k * os] = r[k];
}

// HX_Q8_DOT is the eight 32-bit sums of the activation values at p (32
// bytes) times the weight values wv (their absolute values wa).
#define HX_Q8_DOT(p) _mm256_madd_epi16(_mm256_maddubs_epi16(wa, _mm256_sign_epi8(_mm256_load_si256((const __m256i *)(p)), wv)), ones)

// hx_a_q8_0_body: one weight row (its scales widened wd, or null) times
// nx (1 to 7) activation rows of a side table in the row layout: each
// block's sums folded four pairs at a time.
HX_A2 static inline __attribute__((always_inline)) void hx_a_q8_0_body(const uint8_t *w, const float *wd, const void *xa, int nx, int nb,
                                                                       float *out, size_t os) {
	const int g4 = hx_q8x_g4(nx);
	const float *xd = (const float *)xa;
	const uint8_t *xq = (const uint8_t *)xa + hx_q8x_voff(nb, nx);
	const __m256i ones = _mm256_set1_epi16(1), z = _mm256_setzero_si256();
	__m128 acc[2] = {_mm_setzero_ps(), _mm_setzero_ps()};
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 34, *xb = xq + (size_t)ib * 32 * nx;
		const __m256i wv = _mm256_loadu_si256((const __m256i *)(wb + 2)), wa = _mm256_abs_epi8(wv);
		const __m128 dw = wd ? _mm_broadcast_ss(wd + ib) : _mm_set1_ps(hx_h2f_avx2(wb));
		for (int q = 0; q < g4 / 4; q++) {
			const int j = 4 * q;
			const __m128i s = hx_a2_fold4(HX_Q8_DOT(xb + 32 * j), j + 1 < nx ? HX_Q8_DOT(xb + 32 * (j + 1)) : z,
			                              j + 2 < nx ? HX_Q8_DOT(xb + 32 * (j + 2)) : z, j + 3 < nx ? HX_Q8_DOT(xb + 32 * (j + 3)) : z);
			acc[q] = _mm_fmadd_ps(_mm_cvtepi32_ps(s), _mm_mul_ps(dw, _mm_load_ps(xd + (size_t)ib * g4 + j)), acc[q]);
			HX_PIN(acc[q]);
		}
	}
	hx_q8_out(_mm256_set_m128(acc[1], acc[0]), out, os, nx);
}

// hx_a_q8_0_il: one weight row times nh groups of eight activation rows
// whose side table holds the values interleaved (hx_q8x_fill): for each
// four bytes k of a block and each group, the group's eight rows' four
// bytes, one vector. So one vpmaddubsw of that vector with the weights'
// bytes k broadcast makes products for eight rows, the eight 32-bit lanes
// summed over k are the eight rows' block sums, and one conversion and
// one FMA a block serve the eight rows.
HX_A2 static inline __attribute__((always_inline)) void hx_a_q8_0_il(const uint8_t *w, const float *wd, const void *xa, int nb, float *out,
                                                                     size_t os, int nh) {
	const int g = 8 * nh;
	const float *xd = (const float *)xa;
	const uint8_t *xq = (const uint8_t *)xa + hx_q8x_voff(nb, g);
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 34, *xb = xq + (size_t)ib * 32 * g;
		__m256i s0 = _mm256_setzero_si256(), s1 = s0;
		for (int k = 0; k < 8; k++) {
			uint32_t w4;
			memcpy(&w4, wb + 2 + 4 * k, 4);
			const __m256i wv = _mm256_set1_epi32((int)w4), wa = _mm256_abs_epi8(wv);
			s0 = _mm256_add_epi32(s0, HX_Q8_DOT(xb + 32 * nh * k));
			if (nh == 2) s1 = _mm256_add_epi32(s1, HX_Q8_DOT(xb + 32 * nh * k + 32));
		}
		const __m256 dw = wd ? _mm256_broadcast_ss(wd + ib) : _mm256_set1_ps(hx_h2f_avx2(wb));
		acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), _mm256_mul_ps(dw, _mm256_load_ps(xd + (size_t)ib * g)), acc0);
		if (nh == 2) acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1), _mm256_mul_ps(dw, _mm256_load_ps(xd + (size_t)ib * g + 8)), acc1);
	}
	hx_q8_out(acc0, out, os, 8);
	if (nh == 2) hx_q8_out(acc1, out + 8 * os, os, 8);
}

// HX_Q8_W is the eight 32-bit sums of block ib of weight row wr times the
// activation values xv, for hx_a_q8_0_p.
#define HX_Q8_W(wr, ib) \
	({ \
		const __m256i wv_ = _mm256_loadu_si256((const __m256i *)((wr) + (size_t)(ib) * 34 + 2)); \
		_mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(wv_), _mm256_sign_epi8(xv, wv_)), ones); \
	})

// hx_a_q8_0_p: four weight rows (w, w + rb, w + 2·rb, w + 3·rb) times one
// activation row, into out, out + ro, ...: the four pairs' block sums
// folded into one vector, their scales gathered into another; four long
// sequential streams that the prefetchers follow. (With two rows a call
// and ggml's float lanes: DecodeRows Q8_0 from cache 24-25 GB/s, from
// memory 23-26; with four and the exact block sums 28-29, 27-29.)
HX_A2 __attribute__((noinline)) void hx_a_q8_0_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb,
                                                 float *out) {
	(void)x;
	const float *xd = (const float *)xa;
	const uint8_t *xq = (const uint8_t *)xa + hx_q8x_voff(nb, 1), *w1 = w + rb, *w2 = w1 + rb, *w3 = w2 + rb;
	const __m256i ones = _mm256_set1_epi16(1);
	__m128 a = _mm_setzero_ps();
	for (int ib = 0; ib < nb; ib++) {
		const size_t o = (size_t)ib * 34;
		if (!(ib & 1)) {
			hx_a2_prefetch(w + o, 68);
			hx_a2_prefetch(w1 + o, 68);
			hx_a2_prefetch(w2 + o, 68);
			hx_a2_prefetch(w3 + o, 68);
		}
		const __m256i xv = _mm256_load_si256((const __m256i *)(xq + (size_t)ib * 32));
		const __m128i s = hx_a2_fold4(HX_Q8_W(w, ib), HX_Q8_W(w1, ib), HX_Q8_W(w2, ib), HX_Q8_W(w3, ib));
		uint16_t h[4];
		memcpy(h, w + o, 2), memcpy(h + 1, w1 + o, 2), memcpy(h + 2, w2 + o, 2), memcpy(h + 3, w3 + o, 2);
		uint64_t h64;
		memcpy(&h64, h, 8);
		const __m128 dw = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)h64));
		a = _mm_fmadd_ps(_mm_cvtepi32_ps(s), _mm_mul_ps(_mm_broadcast_ss(xd + (size_t)ib * 4), dw), a);
	}
	hx_q8_out(_mm256_castps128_ps256(a), out, ro, 4);
}

// HX_Q8_W2_BLOCK loads block ib (at o) of the weight rows w and w1 of the
// two-row kernels (v0, v1; their absolute values a0, a1), asking for the
// next lines every other block.
#define HX_Q8_W2_BLOCK \
	if (!(ib & 1)) { \
		hx_a2_prefetch(w + o, 68); \
		hx_a2_prefetch(w1 + o, 68); \
	} \
	const __m256i v0 = _mm256_loadu_si256((const __m256i *)(w + o + 2)), v1 = _mm256_loadu_si256((const __m256i *)(w1 + o + 2)); \
	const __m256i a0 = _mm256_abs_epi8(v0), a1 = _mm256_abs_epi8(v1)

// hx_a_q8_0_w2: two weight rows (w, w + rb; results at out and out + ro)
// times two activation rows of a side table in the row layout (results
// os apart): the four pairs' block sums folded into one vector, [w0x0
// w1x0 w0x1 w1x1], each times its dw·dx. Two streams of decode run it:
// the kernel for one weight row folded two pairs a block (17.8 G
// multiply-adds/s in the model, where four weight rows of one activation
// row make 26).
HX_A2 __attribute__((noinline)) void hx_a_q8_0_w2(const uint8_t *w, size_t rb, size_t ro, const void *xa, int nb, float *out, size_t os) {
	const float *xd = (const float *)xa;
	const uint8_t *xq = (const uint8_t *)xa + hx_q8x_voff(nb, 2), *w1 = w + rb;
	const __m256i ones = _mm256_set1_epi16(1);
	__m128 a = _mm_setzero_ps();
	for (int ib = 0; ib < nb; ib++) {
		const size_t o = (size_t)ib * 34;
		HX_Q8_W2_BLOCK;
		const __m256i x0 = _mm256_load_si256((const __m256i *)(xq + (size_t)ib * 64)), x1 = _mm256_load_si256((const __m256i *)(xq + (size_t)ib * 64 + 32));
		const __m128i s = hx_a2_fold4(_mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(x0, v0)), ones),
		                              _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(x0, v1)), ones),
		                              _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(x1, v0)), ones),
		                              _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(x1, v1)), ones));
		uint32_t h2 = 0;
		memcpy(&h2, w + o, 2);
		memcpy((uint8_t *)&h2 + 2, w1 + o, 2);
		const __m128 dw = _mm_cvtph_ps(_mm_cvtsi32_si128((int)h2)), dx = _mm_load_ps(xd + (size_t)ib * 4);
		a = _mm_fmadd_ps(_mm_cvtepi32_ps(s), _mm_mul_ps(_mm_movelh_ps(dw, dw), _mm_unpacklo_ps(dx, dx)), a);
	}
	_Alignas(16) float r[4];
	_mm_store_ps(r, a);
	out[0] = r[0], out[ro] = r[1], out[os] = r[2], out[os + ro] = r[3];
}

// hx_a_q8_0_w2x4: hx_a_q8_0_w2 for four activation rows: each weight
// row's four pairs folded into one vector.
HX_A2 __attribute__((noinline)) void hx_a_q8_0_w2x4(const uint8_t *w, size_t rb, size_t ro, const void *xa, int nb, float *out, size_t os) {
	const float *xd = (const float *)xa;
	const uint8_t *xq = (const uint8_t *)xa + hx_q8x_voff(nb, 4), *w1 = w + rb;
	const __m256i ones = _mm256_set1_epi16(1);
	__m128 c0 = _mm_setzero_ps(), c1 = c0;
	for (int ib = 0; ib < nb; ib++) {
		const size_t o = (size_t)ib * 34;
		HX_Q8_W2_BLOCK;
		const uint8_t *xb = xq + (size_t)ib * 128;
		__m256i p0[4], p1[4];
		for (int j = 0; j < 4; j++) {
			const __m256i x = _mm256_load_si256((const __m256i *)(xb + 32 * j));
			p0[j] = _mm256_madd_epi16(_mm256_maddubs_epi16(a0, _mm256_sign_epi8(x, v0)), ones);
			p1[j] = _mm256_madd_epi16(_mm256_maddubs_epi16(a1, _mm256_sign_epi8(x, v1)), ones);
		}
		const __m128 dx = _mm_load_ps(xd + (size_t)ib * 4);
		c0 = _mm_fmadd_ps(_mm_cvtepi32_ps(hx_a2_fold4(p0[0], p0[1], p0[2], p0[3])), _mm_mul_ps(_mm_set1_ps(hx_h2f_avx2(w + o)), dx), c0);
		c1 = _mm_fmadd_ps(_mm_cvtepi32_ps(hx_a2_fold4(p1[0], p1[1], p1[2], p1[3])), _mm_mul_ps(_mm_set1_ps(hx_h2f_avx2(w1 + o)), dx), c1);
	}
	_Alignas(16) float r0[4], r1[4];
	_mm_store_ps(r0, c0);
	_mm_store_ps(r1, c1);
	for (int j = 0; j < 4; j++) out[(size_t)j * os] = r0[j], out[(size_t)j * os + ro] = r1[j];
}

#define HX_Q8_0_CALL(k) hx_a_q8_0_body(w, (const float *)wp, xa, k, nb, out, os)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 1)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 2)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 3)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 4)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 5)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 6)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_CALL, 7)
#define HX_Q8_0_IL(k) hx_a_q8_0_il(w, (const float *)wp, xa, nb, out, os, (k) / 8)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_IL, 8)
HX_AFN_K(hx_a_q8_0, HX_Q8_0_IL, 16)
_Static_assert(HX_Q8T == 16, "hx_a_q8_0_k ends with the tile of sixteen");
const hx_tfn hx_a_q8_0_k[HX_Q8T + 1] = {0, hx_a_q8_0_1, hx_a_q8_0_2, hx_a_q8_0_3, hx_a_q8_0_4, hx_a_q8_0_5, hx_a_q8_0_6, hx_a_q8_0_7,
                                        hx_a_q8_0_8, [16] = hx_a_q8_0_16};

// hx_q8x_fill writes the side table of the g activation rows at x (xs
// bytes apart, nb Q8_0 blocks each): the scales as floats, [nb][g4] (the
// rows past g zero), then the values, 32-byte aligned: [nb][g][32] for g
// below eight, and for 8 and 16 interleaved for hx_a_q8_0_il, [nb][k][g/8]
// and the eight rows' bytes 4k to 4k+3 (one 8×8 transpose of 32-bit words
// a block and group of eight).
HX_A2 void hx_q8x_fill(uint8_t *side, const uint8_t *x, size_t xs, int g, int nb) {
	const int g4 = hx_q8x_g4(g);
	float *xd = (float *)side;
	uint8_t *xq = side + hx_q8x_voff(nb, g);
	for (int ib = 0; ib < nb; ib++) {
		for (int j = 0; j < g4; j++) xd[(size_t)ib * g4 + j] = j < g ? hx_h2f_avx2(x + (size_t)j * xs + (size_t)ib * 34) : 0;
		if (g < 8) {
			for (int j = 0; j < g; j++) memcpy(xq + ((size_t)ib * g + j) * 32, x + (size_t)j * xs + (size_t)ib * 34 + 2, 32);
			continue;
		}
		for (int h = 0; h < g / 8; h++) {
			__m256i r[8], t[8], u[8];
			for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_si256((const __m256i *)(x + (size_t)(8 * h + j) * xs + (size_t)ib * 34 + 2));
			for (int j = 0; j < 8; j += 2) {
				t[j] = _mm256_unpacklo_epi32(r[j], r[j + 1]);
				t[j + 1] = _mm256_unpackhi_epi32(r[j], r[j + 1]);
			}
			for (int j = 0; j < 8; j += 4) {
				u[j] = _mm256_unpacklo_epi64(t[j], t[j + 2]);
				u[j + 1] = _mm256_unpackhi_epi64(t[j], t[j + 2]);
				u[j + 2] = _mm256_unpacklo_epi64(t[j + 1], t[j + 3]);
				u[j + 3] = _mm256_unpackhi_epi64(t[j + 1], t[j + 3]);
			}
			// u[c] (c < 4) holds words c and c + 4 of rows 0-3, u[4 + c] of rows 4-7
			uint8_t *o = xq + (size_t)ib * 32 * g + 32 * h;
			for (int c = 0; c < 4; c++) {
				_mm256_store_si256((__m256i *)(o + 32 * (g / 8) * c), _mm256_permute2x128_si256(u[c], u[4 + c], 0x20));
				_mm256_store_si256((__m256i *)(o + 32 * (g / 8) * (c + 4)), _mm256_permute2x128_si256(u[c], u[4 + c], 0x31));
			}
		}
	}
}
#endif
