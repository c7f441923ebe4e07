//go:build cgo && !purego

// AVX2 kernels for the weight types of the common GGUF mixes (Q8_0, Q4_K,
// Q5_K, Q6_K) on CPUs without AVX-512 VNNI (AMD Zen 2 and 3, Intel before
// Ice Lake): one weight row times a tile of activation rows. Like the
// VNNI kernels they are not bit-identical to the Go kernels: the integer
// sums are exact, the float sums run in vector lanes. Each weight block is
// decoded once into registers and multiplied with every activation row of
// the tile: vpmaddubsw (unsigned 8-bit times signed 8-bit, pairs summed to
// 16 bits) then vpmaddwd by the sub-block scale (or by ones) to 32 bits.
// The Q4_K and Q5_K kernels are in kernels_avx2_k4.c, what both files
// share in kernels_avx2.h.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kernels_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_avx2.h"

int hx_avx2(void) {
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

int hx_avx2_supports(int type) { return type == HX_Q8_0 || type == HX_Q4_K || type == HX_Q5_K || type == HX_Q6_K; }

// hx_k6a is what the Q6_K kernels read of one Q8_K activation block,
// copied once a tile instead of once a weight row: its values, 32-byte
// aligned (in the 292-byte blocks every other load straddled two cache
// lines), its sixteen sums of sixteen values (for the 32·x term) and its
// scale.
typedef struct {
	int8_t q[256];
	int16_t bs[16];
	float dy;
	float pad[7];
} hx_k6a;
_Static_assert(sizeof(hx_k6a) % 32 == 0, "hx_k6a keeps the values of the next block aligned");

// hx_k6a_fill works out a's fields for the Q8_K block at xb.
HX_A2 static void hx_k6a_fill(hx_k6a *a, const uint8_t *xb) {
	for (int c = 0; c < 8; c++) _mm256_store_si256((__m256i *)(a->q + 32 * c), _mm256_loadu_si256((const __m256i *)(xb + 4 + 32 * c)));
	_mm256_store_si256((__m256i *)a->bs, _mm256_loadu_si256((const __m256i *)(xb + 260)));
	a->dy = hx_f32(xb);
}

// Q6_K (210-byte blocks of 256: 128 low-nibble bytes, 64 bytes of high
// bits, 16 int8 scales, fp16 d) times Q8_K activations: the 6-bit values
// are used unsigned, and each pair's 32·scale·x term is taken off its
// block sum at once (one vpmaddwd of the sixteen scales and the sixteen
// sums of sixteen activations), as the tile of eight does, where ggml
// takes 32·x off every pair sum of vpmaddubsw (a subtraction and a load
// for each, one in ten of the decode kernel's instructions). Unlike
// ggml, which keeps eight float lanes a row, each pair's block sum is
// exact in one integer and added times d·dy with one FMA, as in the Q4_K
// and Q8_0 kernels and the tile of eight (kernels_avx2_q6il.c): the same
// bits however a row is batched. With nr = 2 (one activation row) it
// takes two weight rows.
HX_A2 static inline __attribute__((always_inline)) void hx_a_q6_k_body(const uint8_t *w, size_t rb, size_t ro, int nr, const hx_k6a *xa,
                                                                       int nx, int nb, float *out, size_t os) {
	const __m256i lo4 = _mm256_set1_epi8(0x0F), hi2 = _mm256_set1_epi8(0x30);
	__m128 acc = _mm_setzero_ps(); // lane k: pair k (r·nx + j)
	for (int i = 0; i < nb; i++) {
		__m256i t[HX_AN], s16[2]; // s16: each row's sixteen scales as int16
		for (int k = 0; k < nr * nx; k++) t[k] = _mm256_setzero_si256();
		for (int r = 0; r < nr; r++) s16[r] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + (size_t)r * rb + (size_t)i * 210 + 192)));
		for (int h = 0; h < 2; h++) {
			for (int r = 0; r < nr; r++) {
				const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 210;
				if (nr == 2 && h == 0) hx_a2_prefetch(wb, 210);
				// scales 8h to 8h+7, in both halves
				const __m256i sc = _mm256_permute2x128_si256(s16[r], s16[r], h ? 0x11 : 0x00);
				const __m256i l0 = _mm256_loadu_si256((const __m256i *)(wb + 64 * h));
				const __m256i l1 = _mm256_loadu_si256((const __m256i *)(wb + 64 * h + 32));
				const __m256i hb = _mm256_loadu_si256((const __m256i *)(wb + 128 + 32 * h));
				// the values: four low bits from l0/l1, bits 4-5 from hb's
				// pairs of bits, each moved into place by one 16-bit shift
				// (the bits it brings in from the next byte masked off)
				__m256i q[4];
				q[0] = _mm256_or_si256(_mm256_and_si256(l0, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), hi2));
				q[1] = _mm256_or_si256(_mm256_and_si256(l1, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), hi2));
				q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), lo4), _mm256_and_si256(hb, hi2));
				q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), lo4), _mm256_and_si256(_mm256_srli_epi16(hb, 2), hi2));
				for (int k = 0; k < 4; k++) {
					// chunk 4h+k holds groups 8h+2k (int16 lanes 0-7) and
					// 8h+2k+1 (8-15): words 2k and 2k+1 of sc
					const char a = (char)(4 * k), b = (char)(4 * k + 2);
					const __m256i s = _mm256_shuffle_epi8(sc, _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a,
					                                                           a + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b,
					                                                           b + 1, b, b + 1));
					for (int j = 0; j < nx; j++) {
						const hx_k6a *a = xa + (size_t)j * nb + i;
						const __m256i xv = _mm256_load_si256((const __m256i *)(a->q + 128 * h + 32 * k));
						t[r * nx + j] = _mm256_add_epi32(t[r * nx + j], _mm256_madd_epi16(s, _mm256_maddubs_epi16(q[k], xv)));
						HX_PIN(t[r * nx + j]);
					}
				}
			}
		}
		// each pair's 32·Σ scale·x off (at most 2·128·2048·32 a lane), so
		// its block sum is exact, then one FMA by d·dy
		for (int r = 0; r < nr; r++)
			for (int j = 0; j < nx; j++) {
				const __m256i m = _mm256_madd_epi16(s16[r], _mm256_load_si256((const __m256i *)xa[(size_t)j * nb + i].bs));
				t[r * nx + j] = _mm256_sub_epi32(t[r * nx + j], _mm256_slli_epi32(m, 5));
			}
		if (nr == 2) {
			const __m256i u = _mm256_add_epi32(_mm256_unpacklo_epi32(t[0], t[1]), _mm256_unpackhi_epi32(t[0], t[1]));
			const __m128i v = _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
			const __m128i s01 = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E)); // [I0 I1 I0 I1]
			uint32_t h2 = 0;
			memcpy(&h2, w + (size_t)i * 210 + 208, 2);
			memcpy((uint8_t *)&h2 + 2, w + rb + (size_t)i * 210 + 208, 2);
			const __m128 d01 = _mm_cvtph_ps(_mm_cvtsi32_si128((int)h2));
			acc = _mm_fmadd_ps(_mm_cvtepi32_ps(s01), _mm_mul_ps(d01, _mm_broadcast_ss(&xa[i].dy)), acc);
			HX_PIN(acc);
			continue;
		}
		_Alignas(16) float f[4] = {0, 0, 0, 0};
		for (int r = 0; r < nr; r++) {
			const float d = hx_h2f_avx2(w + (size_t)r * rb + (size_t)i * 210 + 208);
			for (int j = 0; j < nx; j++) f[r * nx + j] = d * xa[(size_t)j * nb + i].dy;
		}
		const __m256i z = _mm256_setzero_si256();
		const __m128i sum = hx_a2_fold4(t[0], nr * nx > 1 ? t[1] : z, nr * nx > 2 ? t[2] : z, nr * nx > 3 ? t[3] : z);
		acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sum), _mm_load_ps(f), acc);
		HX_PIN(acc);
	}
	_Alignas(16) float r4[4];
	_mm_store_ps(r4, acc);
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nx; j++) out[(size_t)j * os + (size_t)r * ro] = r4[r * nx + j];
}

#define HX_Q6_K_CALL(k) (void)wp, hx_a_q6_k_body(w, 0, 0, 1, (const hx_k6a *)xa, k, nb, out, os)
HX_A2 __attribute__((noinline)) static void hx_a_q6_k_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb,
                                                        float *out) {
	(void)x;
	hx_a_q6_k_body(w, rb, ro, 2, (const hx_k6a *)xa, 1, nb, out, 0);
}
HX_AFN_K(hx_a_q6_k, HX_Q6_K_CALL, 1)
HX_AFN_K(hx_a_q6_k, HX_Q6_K_CALL, 2)
HX_AFN_K(hx_a_q6_k, HX_Q6_K_CALL, 3)
HX_AFN_K(hx_a_q6_k, HX_Q6_K_CALL, 4)
// 1 to 4 activation rows, and the tile of eight (kernels_avx2_q6il.c)
static const hx_tfn hx_a_q6_k_k[HX_K4T + 1] = {0, hx_a_q6_k_1, hx_a_q6_k_2, hx_a_q6_k_3, hx_a_q6_k_4, 0, 0, 0, hx_a_q6_k_il};

// hx_side_fill works out the side table of the g activation rows at x (xs
// bytes apart, nb blocks each) for the kernels of type.
HX_A2 static void hx_side_fill(int type, uint8_t *side, const uint8_t *x, size_t xs, int g, int nb) {
	if (type == HX_Q8_0) {
		hx_q8x_fill(side, x, xs, g, nb);
		return;
	}
	const int q6 = type == HX_Q6_K;
	if (g == HX_K4T) { // the K-quant tiles: all the rows, block by block, interleaved
		for (int ib = 0; ib < nb; ib++) {
			if (q6)
				hx_q6il_fill((hx_q6il *)side + ib, x, xs, ib);
			else
				hx_k4il_fill((hx_k4il *)side + ib, x, xs, ib);
		}
		return;
	}
	for (int j = 0; j < g; j++)
		for (int ib = 0; ib < nb; ib++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 292;
			if (q6)
				hx_k6a_fill((hx_k6a *)side + (size_t)j * nb + ib, xb);
			else
				hx_k8a_fill((hx_k8a *)side + (size_t)j * nb + ib, xb);
		}
}

// hx_q8w_table widens the scales of nrows Q8_0 rows of nb blocks (rb
// bytes apart) into a buffer from the heap, or returns null.
HX_A2 static float *hx_q8w_table(const uint8_t *w, size_t rb, int nrows, int nb) {
	float *t = aligned_alloc(32, ((size_t)nrows * (size_t)nb * sizeof(float) + 31) & ~(size_t)31);
	if (!t) return 0;
	for (int r = 0; r < nrows; r++)
		for (int ib = 0; ib < nb; ib++) t[(size_t)r * nb + ib] = hx_h2f_avx2(w + (size_t)r * rb + (size_t)ib * 34);
	return t;
}

int hx_avx2_rows(int type, const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int n, float *out,
                  size_t os) {
	// per type: the kernels for 1 to tile activation rows, the decode
	// kernel (np weight rows a call), the tile and the block size
	const hx_tfn *fns;
	hx_pfn pair;
	int tile, nb, np = 2; // np: the weight rows of one call of pair
	switch (type) {
	case HX_Q8_0: fns = hx_a_q8_0_k, pair = hx_a_q8_0_p, tile = HX_Q8T, nb = n / 32, np = 4; break;
	case HX_Q4_K: fns = hx_a_q4_k_k, pair = hx_a_q4_k_p, tile = HX_K4T, nb = n / 256; break;
	case HX_Q5_K: fns = hx_a_q5_k_k, pair = hx_a_q5_k_p, tile = HX_K4T, nb = n / 256; break;
	case HX_Q6_K: fns = hx_a_q6_k_k, pair = hx_a_q6_k_p, tile = HX_K4T, nb = n / 256; break;
	default: return 0;
	}
	// each tile of activation rows passes over the weight rows; the
	// caller bounds the rows so that they stay in cache between tiles.
	// What a kernel needs of the activations (Q8_0: the values, aligned,
	// and the scales widened; Q4_K, Q5_K: hx_k8a) is worked out once a tile
	// into side: on the stack, or from the heap for rows too wide for it.
	// A Q4_K/Q5_K tile reads the weight blocks' scales decoded once a call
	// for all its tiles into wside (hx_k4w), from the heap, where there are
	// more than two tiles: BenchmarkPrefillTile Q4_K 52 → 55 (n1024), 60 →
	// 62 (n3072), Qwen3-0.6B Q4_K_M pp512 +5 %; with eight streams (two
	// tiles) the table cost what it saved. A Q8_0 tile likewise reads its
	// weight scales widened once a call (wd) past 16 activation rows: Q8_0
	// 39.7 → 41.5, 40.2 → 42.3 (with tiles of eight).
	_Alignas(32) uint8_t stack[HX_SIDE];
	const int q8 = type == HX_Q8_0, k4 = type == HX_Q4_K || type == HX_Q5_K;
	// a K-quant tile of eight takes more a block than four rows of the
	// plain layout
	_Static_assert(sizeof(hx_k4il) >= HX_AN * sizeof(hx_k8a) && sizeof(hx_q6il) >= HX_AN * sizeof(hx_k6a), "the side table fits four rows");
	const size_t need = q8   ? hx_q8x_voff(nb, tile) + (size_t)tile * (size_t)nb * 32
	                    : k4 ? (size_t)nb * sizeof(hx_k4il)
	                         : (size_t)nb * sizeof(hx_q6il);
	uint8_t *side = need <= sizeof stack ? stack : aligned_alloc(32, (need + 31) & ~(size_t)31);
	if (!side) return 0;
	const int pre = nx > (q8 ? 16 : 2 * tile); // the weight tables pay off
	hx_k4w *wside = k4 && pre ? hx_k4w_table(type, w, rb, nrows, nb) : 0;
	float *wd = q8 && pre ? hx_q8w_table(w, rb, nrows, nb) : 0;
	if ((k4 || q8) && pre && !wside && !wd) {
		if (side != stack) free(side);
		return 0;
	}
	for (int j0 = 0; j0 < nx;) {
		int g = nx - j0 < tile ? nx - j0 : tile;
		if (q8 && g < tile && g > 8) g = 8; // Q8_0 has no kernels for 9 to 15: eight, then the rest
		if (!q8 && g < tile && g > HX_AN) g = HX_AN; // the K-quants none for 5 to 7: four, then the rest
		hx_side_fill(type, side, x + (size_t)j0 * xs, xs, g, nb);
		const void *xa = side;
		int r = 0;
		if (g == 1) {
			// rows i, part + i, ... together: np long sequential streams
			// that the prefetchers follow (pairs of neighbouring rows made
			// short interleaved ones, and read memory at 60 % the speed)
			const int part = nrows / np;
			for (; r < part; r++) pair(w + (size_t)r * rb, (size_t)part * rb, (size_t)part, x + (size_t)j0 * xs, xa, nb, out + (size_t)j0 * os + r);
			r = np * part;
		} else if (q8 && (g == 2 || g == 4)) {
			// two or four activation rows: rows i and half + i, as decode
			const int half = nrows / 2;
			for (; r < half; r++)
				(g == 2 ? hx_a_q8_0_w2 : hx_a_q8_0_w2x4)(w + (size_t)r * rb, (size_t)half * rb, (size_t)half, xa, nb, out + (size_t)j0 * os + r, os);
			r = 2 * half;
		}
		for (; r < nrows; r++) {
			const void *wp = wside ? (const void *)(wside + (size_t)r * nb) : wd ? (const void *)(wd + (size_t)r * nb) : 0;
			fns[g](w + (size_t)r * rb, wp, xa, nb, out + (size_t)j0 * os + r, os);
		}
		j0 += g;
	}
	free(wside);
	free(wd);
	if (side != stack) free(side);
	return 1;
}

#else
int hx_avx2(void) { return 0; }
int hx_avx2_supports(int type) { (void)type; return 0; }
int hx_avx2_rows(int type, const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int n, float *out,
                  size_t os) {
	(void)type; (void)w; (void)rb; (void)nrows; (void)x; (void)xs; (void)nx; (void)n; (void)out; (void)os;
	return 0;
}
#endif
