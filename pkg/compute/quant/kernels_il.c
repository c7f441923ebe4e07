//go:build cgo && !purego

// The interleaved prefill kernels (AVX-512 VNNI): groups of 16 weight rows
// unpacked to a byte per value, four values of every row per vector, each
// activation row passed over them (kernels_il.h has the layouts). The
// groups come from the file's layout or from packed weights
// (kernels_r16.c).

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kernels_il.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_vnni.h"

// Prefill of K-quant weights with row-interleaved blocks (Q4_K, Q5_K,
// Q6_K).
// For at least HX_IL_MIN activation rows, each group of HX_IL (16) weight
// rows is first unpacked into hx_il_block's layout, where one 64-byte
// vector holds four consecutive values of each of the 16 rows (lane ρ: row
// ρ), so that one vpdpbusd multiplies them with four activation bytes
// broadcast to every lane: 64 multiply-adds per instruction into one int32
// lane per row (the tile kernels above need vpmaddubsw and vpdpwssd for as
// many, and a horizontal sum per row at the end). Each sub-block's integer
// sums are scaled once per activation row (the row's d·scale, less its
// offset times the activations' sum over the sub-block: dmin·min for Q4_K,
// 32·d·scale for Q6_K's unsigned values), each block's once more by the
// activation scale. The group's unpacked blocks (6 KB each) stay in cache
// while every activation row passes over them.
#define HX_IL_J 8

// hx_il_block (kernels_il.h) is one unpacked block of a group.

// hx_il_put stores 256 unpacked values of row r into o.
HX_VNNI static inline void hx_il_put(hx_il_block *o, int r, const uint8_t *vals) {
	for (int m = 0; m < 64; m++) memcpy(&o->q[m][4 * r], vals + 4 * m, 4);
}

// hx_il_pack_q4_k unpacks HX_IL rows (rb bytes apart) of nb Q4_K blocks,
// or with q5 of Q5_K blocks (the fifth bits from qh, as hx_v_q4_k_body
// takes them).
HX_VNNI static void hx_il_pack_q4_k(const uint8_t *w, size_t rb, int nb, hx_il_block *out, int q5) {
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	for (int i = 0; i < nb; i++) {
		hx_il_block *o = out + i;
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * bsz;
			float d = hx_h2f(wb), dmin = hx_h2f(wb + 2);
			uint8_t sm[16], vals[256];
			_mm_storeu_si128((__m128i *)sm, hx_k4_scales(wb + 4));
			o->d[r] = d;
			o->dmin[r] = dmin;
			for (int sb = 0; sb < 8; sb++) {
				o->sc[sb][r] = sm[sb];
				o->mn[sb][r] = sm[8 + sb];
			}
			__m256i qh = q5 ? _mm256_loadu_si256((const __m256i *)(wb + 16)) : _mm256_setzero_si256();
			for (int c = 0; c < 4; c++) {
				__m256i lo, hi;
				hx_k4_chunk(wb + qoff + 32 * c, qh, c, q5, &lo, &hi);
				_mm256_storeu_si256((__m256i *)(vals + 64 * c), lo);
				_mm256_storeu_si256((__m256i *)(vals + 64 * c + 32), hi);
			}
			hx_il_put(o, r, vals);
		}
	}
}

// hx_il_pack_q6_k unpacks HX_IL rows (rb bytes apart) of nb Q6_K blocks:
// the 6-bit values unsigned (q, not q−32; the offset 32·d·scale removes
// the excess).
HX_VNNI static void hx_il_pack_q6_k(const uint8_t *w, size_t rb, int nb, hx_il_block *out) {
	const __m512i lo4 = _mm512_set1_epi8(0x0F), three = _mm512_set1_epi8(3);
	for (int i = 0; i < nb; i++) {
		hx_il_block *o = out + i;
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 210;
			float d = hx_h2f(wb + 208);
			uint8_t vals[256];
			o->d[r] = d;
			for (int t = 0; t < 16; t++) o->sc[t][r] = (int8_t)wb[192 + t];
			for (int h = 0; h < 2; h++) { // as hx_v_q6_k_body: values 128h … +63, then +64 … +127
				__m512i l = _mm512_loadu_si512((const void *)(wb + 64 * h));
				__m256i qh = _mm256_loadu_si256((const __m256i *)(wb + 128 + 32 * h));
				__m512i hb = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
				_mm512_storeu_si512((void *)(vals + 128 * h),
				                    _mm512_or_si512(_mm512_and_si512(l, lo4), _mm512_slli_epi16(_mm512_and_si512(hb, three), 4)));
				_mm512_storeu_si512((void *)(vals + 128 * h + 64),
				                    _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), lo4),
				                                    _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hb, 4), three), 4)));
			}
			hx_il_put(o, r, vals);
		}
	}
}

// hx_il_body multiplies one unpacked group (nb blocks of SB sub-blocks)
// with nj ≤ HX_IL_J activation rows (Q8_K, xs apart; sums: each row's
// integer activation sums per sub-block, SB per block, ss apart: of 32
// values for Q4_K, 32 times those of 16 for Q6_K) into out[j·os + ρ]. The
// sums stay integers to the end of each block, in the packed decode
// kernels' order (kernels_r16.c), so that both give the same bits.
HX_VNNI static inline __attribute__((always_inline)) void hx_il_body(const hx_il_block *wb, int nb, const int SB, const uint8_t *x, size_t xs, const int32_t *sums, size_t ss, int nj, float *out, size_t os) {
	const int ST = 64 / SB, q6 = SB == 16; // four-value steps per sub-block
	__m512 f[HX_IL_J];
	for (int j = 0; j < nj; j++) f[j] = _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const hx_il_block *b = wb + i;
		const uint8_t *xb = x + (size_t)i * 292 + 4;
		__m512i is[HX_IL_J];
		for (int j = 0; j < nj; j++) is[j] = _mm512_setzero_si512();
		for (int sb = 0; sb < SB; sb++) {
			__m512i acc[HX_IL_J];
			for (int j = 0; j < nj; j++) acc[j] = _mm512_setzero_si512();
			for (int k = 0; k < ST; k++) {
				const int m = sb * ST + k;
				const __m512i wv = _mm512_load_si512((const void *)b->q[m]);
				for (int j = 0; j < nj; j++) {
					int32_t xv;
					memcpy(&xv, xb + (size_t)j * xs + 4 * m, 4);
					acc[j] = _mm512_dpbusd_epi32(acc[j], wv, _mm512_set1_epi32(xv));
				}
			}
			const __m512i sc = _mm512_load_si512((const void *)b->sc[sb]);
			for (int j = 0; j < nj; j++) {
				const __m512i a = q6 ? _mm512_sub_epi32(acc[j], _mm512_set1_epi32(sums[(size_t)j * ss + (size_t)SB * i + sb])) : acc[j];
				is[j] = _mm512_add_epi32(is[j], _mm512_mullo_epi32(a, sc));
			}
		}
		const __m512 d = _mm512_load_ps(b->d), dm = _mm512_load_ps(b->dmin);
		for (int j = 0; j < nj; j++) {
			float dy;
			memcpy(&dy, x + (size_t)j * xs + (size_t)i * 292, 4);
			const __m512 y = _mm512_set1_ps(dy);
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[j]), _mm512_mul_ps(d, y), f[j]);
			if (q6) continue;
			__m512i ms = _mm512_setzero_si512();
			for (int sb = 0; sb < 8; sb++)
				ms = _mm512_add_epi32(ms, _mm512_mullo_epi32(_mm512_load_si512((const void *)b->mn[sb]),
				                                             _mm512_set1_epi32(sums[(size_t)j * ss + 8 * (size_t)i + sb])));
			f[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms), _mm512_mul_ps(dm, y), f[j]);
		}
	}
	for (int j = 0; j < nj; j++) _mm512_storeu_ps(out + (size_t)j * os, f[j]);
}

HX_VNNI static void hx_il_q4_k(const hx_il_block *wb, int nb, const uint8_t *x, size_t xs, const int32_t *sums, size_t ss, int nj, float *out, size_t os) {
	if (nj == HX_IL_J) hx_il_body(wb, nb, 8, x, xs, sums, ss, HX_IL_J, out, os);
	else hx_il_body(wb, nb, 8, x, xs, sums, ss, nj, out, os);
}

HX_VNNI static void hx_il_q6_k(const hx_il_block *wb, int nb, const uint8_t *x, size_t xs, const int32_t *sums, size_t ss, int nj, float *out, size_t os) {
	if (nj == HX_IL_J) hx_il_body(wb, nb, 16, x, xs, sums, ss, HX_IL_J, out, os);
	else hx_il_body(wb, nb, 16, x, xs, sums, ss, nj, out, os);
}

// hx_il_rows is hx_vnni_rows for Q4_K, Q5_K or Q6_K (type) through the
// interleaved layout: nrows/16 groups that way, the rows left over by the
// tile kernel (tile). It returns 0, having written nothing, when it cannot
// allocate its buffers.
HX_VNNI int hx_il_rows(int type, hx_vfn tile, const uint8_t *w, size_t rb, const uint8_t *pk, size_t gb, int nrows,
                              const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	const int q6 = type == HX_Q6_K, SB = q6 ? 16 : 8;
	hx_il_block *buf = aligned_alloc(64, (size_t)nb * sizeof(hx_il_block));
	int32_t *sums = malloc((size_t)nx * nb * SB * sizeof(int32_t));
	if (!buf || !sums) {
		free(buf);
		free(sums);
		return 0;
	}
	// the activations' sums per sub-block, from their sums of 16
	const size_t ss = (size_t)nb * SB;
	for (int j = 0; j < nx; j++)
		for (int i = 0; i < nb; i++) {
			int16_t bs[16];
			memcpy(bs, x + (size_t)j * xs + (size_t)i * 292 + 260, 32);
			for (int sb = 0; sb < SB; sb++)
				sums[j * ss + (size_t)SB * i + sb] = q6 ? 32 * bs[sb] : bs[2 * sb] + bs[2 * sb + 1];
		}
	const int ng = nrows / HX_IL;
	for (int g = 0; g < ng; g++) {
		if (pk) hx_r16_to_il(type, pk + (size_t)g * gb, nb, buf);
		else if (q6) hx_il_pack_q6_k(w + (size_t)g * HX_IL * rb, rb, nb, buf);
		else hx_il_pack_q4_k(w + (size_t)g * HX_IL * rb, rb, nb, buf, type == HX_Q5_K);
		for (int j0 = 0; j0 < nx; j0 += HX_IL_J) {
			int nj = nx - j0 < HX_IL_J ? nx - j0 : HX_IL_J;
			float *o = out + (size_t)j0 * os + (size_t)g * HX_IL;
			if (q6) hx_il_q6_k(buf, nb, x + (size_t)j0 * xs, xs, sums + (size_t)j0 * ss, ss, nj, o, os);
			else hx_il_q4_k(buf, nb, x + (size_t)j0 * xs, xs, sums + (size_t)j0 * ss, ss, nj, o, os);
		}
	}
	for (int j0 = 0; j0 < nx; j0 += HX_VK) {
		int gj = nx - j0 < HX_VK ? nx - j0 : HX_VK;
		for (int r = ng * HX_IL; r < nrows; r++)
			tile(w + (size_t)r * rb, rb, 1, x + (size_t)j0 * xs, xs, gj, nb, out + (size_t)j0 * os + r, os);
	}
	free(buf);
	free(sums);
	return 1;
}

// Prefill of Q8_0 weights with row-interleaved blocks, as hx_il_rows for
// the K-quants: a 64-byte vector holds four consecutive values of each of
// 16 rows, made unsigned (w+128) when unpacked, and vpdpbusd multiplies them
// with four of the activation's own signed bytes, broadcast; each lane
// starts at −128·Σx of the activation block, so that it ends at Σx·w. One
// float scale per block and activation row (the row's d times the
// activation's).
// (hx_il8_block, in kernels_il.h)

// hx_il8_act is what hx_il8_body needs of one activation block besides
// its values: its scale and −128 times the sum of its values.
typedef struct {
	float d;
	int32_t neg;
} hx_il8_act;

// hx_il8_pack unpacks HX_IL rows (rb bytes apart) of nb Q8_0 blocks.
HX_VNNI static void hx_il8_pack(const uint8_t *w, size_t rb, int nb, hx_il8_block *out) {
	const __m256i k128 = _mm256_set1_epi8((char)0x80);
	for (int i = 0; i < nb; i++) {
		hx_il8_block *o = out + i;
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 34;
			o->d[r] = hx_h2f(wb);
			uint8_t vals[32];
			_mm256_storeu_si256((__m256i *)vals, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(wb + 2)), k128));
			for (int m = 0; m < 8; m++) memcpy(&o->q[m][4 * r], vals + 4 * m, 4);
		}
	}
}

// hx_il8_body multiplies one unpacked group (nb blocks) with nj ≤
// HX_IL_J activation rows (Q8_0, xs apart; xa: their hx_il8_act, nb per
// row) into out[j·os + ρ].
HX_VNNI static inline __attribute__((always_inline)) void hx_il8_body(const hx_il8_block *wb, int nb, const uint8_t *x, size_t xs, const hx_il8_act *xa, int nj, float *out, size_t os) {
	__m512 f[HX_IL_J];
	for (int j = 0; j < nj; j++) f[j] = _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const hx_il8_block *b = wb + i;
		__m512i acc[HX_IL_J];
		for (int j = 0; j < nj; j++) acc[j] = _mm512_set1_epi32(xa[(size_t)j * nb + i].neg);
		for (int m = 0; m < 8; m++) {
			const __m512i wv = _mm512_load_si512((const void *)b->q[m]);
			for (int j = 0; j < nj; j++) {
				int32_t xv;
				memcpy(&xv, x + (size_t)j * xs + (size_t)i * 34 + 2 + 4 * m, 4);
				acc[j] = _mm512_dpbusd_epi32(acc[j], wv, _mm512_set1_epi32(xv));
			}
		}
		const __m512 d = _mm512_load_ps(b->d);
		for (int j = 0; j < nj; j++)
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[j]), _mm512_mul_ps(d, _mm512_set1_ps(xa[(size_t)j * nb + i].d)), f[j]);
	}
	for (int j = 0; j < nj; j++) _mm512_storeu_ps(out + (size_t)j * os, f[j]);
}

HX_VNNI static void hx_il8(const hx_il8_block *wb, int nb, const uint8_t *x, size_t xs, const hx_il8_act *xa, int nj, float *out, size_t os) {
	if (nj == HX_IL_J) hx_il8_body(wb, nb, x, xs, xa, HX_IL_J, out, os);
	else hx_il8_body(wb, nb, x, xs, xa, nj, out, os);
}

// hx_il8_rows is hx_vnni_rows for Q8_0 through the interleaved layout:
// nrows/16 groups that way, the rows left over by hx_vnni_q8_0. It returns
// 0, having written nothing, when it cannot allocate its buffers.
HX_VNNI int hx_il8_rows(const uint8_t *w, size_t rb, const uint8_t *pk, size_t gb, int nrows, const uint8_t *x,
                               size_t xs, int nx, int nb, float *out, size_t os) {
	hx_il8_block *buf = aligned_alloc(64, (size_t)nb * sizeof(hx_il8_block));
	hx_il8_act *xa = malloc((size_t)nx * nb * sizeof(hx_il8_act));
	if (!buf || !xa) {
		free(buf);
		free(xa);
		return 0;
	}
	const __m256i ones = _mm256_set1_epi8(1);
	for (int j = 0; j < nx; j++)
		for (int i = 0; i < nb; i++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 34;
			// Σx: |x|·sign(x) as unsigned·signed byte pairs, then the lanes
			__m256i v = _mm256_loadu_si256((const __m256i *)(xb + 2));
			__m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, v), _mm256_set1_epi16(1));
			__m128i h = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
			h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
			h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
			xa[(size_t)j * nb + i] = (hx_il8_act){hx_h2f(xb), -128 * _mm_cvtsi128_si32(h)};
		}
	const int ng = nrows / HX_IL;
	for (int g = 0; g < ng; g++) {
		if (pk) hx_r16_to_il8(pk + (size_t)g * gb, nb, buf);
		else hx_il8_pack(w + (size_t)g * HX_IL * rb, rb, nb, buf);
		for (int j0 = 0; j0 < nx; j0 += HX_IL_J) {
			int nj = nx - j0 < HX_IL_J ? nx - j0 : HX_IL_J;
			hx_il8(buf, nb, x + (size_t)j0 * xs, xs, xa + (size_t)j0 * nb, nj, out + (size_t)j0 * os + (size_t)g * HX_IL, os);
		}
	}
	if (nrows > ng * HX_IL)
		hx_vnni_q8_0(w + (size_t)ng * HX_IL * rb, rb, nrows - ng * HX_IL, x, xs, nx, nb, out + (size_t)ng * HX_IL, os);
	free(buf);
	free(xa);
	return 1;
}

int hx_il_packed_rows(int type, const uint8_t *p, size_t gb, int ng, const uint8_t *x, size_t xs, int nx, int nb,
                      float *out, size_t os) {
	return hx_il_rows(type, NULL, NULL, 0, p, gb, ng * HX_IL, x, xs, nx, nb, out, os);
}

int hx_il8_packed_rows(const uint8_t *p, size_t gb, int ng, const uint8_t *x, size_t xs, int nx, int nb, float *out,
                       size_t os) {
	return hx_il8_rows(NULL, 0, p, gb, ng * HX_IL, x, xs, nx, nb, out, os);
}

#endif
