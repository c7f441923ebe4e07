//go:build cgo && !purego

// Packed weights: Q4_K, Q6_K and Q8_0 matrices rearranged once, at load,
// into groups of 16 rows whose values interleave four at a time (the
// layout of kernels_il.h, still 4 or 6 bits a value), for the AVX-512 VNNI
// kernels. One 64-byte vector then holds the same four positions of 16
// rows, and one vpdpbusd multiplies them with four activation bytes
// broadcast from memory: decode needs about a quarter of the instructions
// per weight of the row-at-a-time kernels of kernels_vnni.c, and no
// horizontal sums. The integer sums are exact; the float sums run in
// another order than the portable kernels'.
//
// A group of nb blocks (256 values for the K-quants, 32 for Q8_0) keeps
// each block's row scales in one stream with the block's values: Q4_K
// blocks end with theirs; Q8_0 blocks go in pairs, two bodies and then
// their two d[16]; Q6_K's nb bodies are followed by the blocks' row
// scales (a "tail"). Groups are padded to 64 bytes:
//
//	Q4_K block (2368 B): q[32][64]: vector t = 8c+k, lane ρ holds bytes
//	                      4k … 4k+3 of chunk c of row ρ (low nibbles:
//	                      values 64c+4k …, high: 64c+32+4k …); sc[8][16]
//	                      6-bit scales; mn[4][16][2] 6-bit mins, pairs of
//	                      sub-blocks per lane; d[16], dmin[16] as fp16
//	Q6_K body (3328 B): 16 triples (ql[2s], ql[2s+1], qh[s]) of 64 B,
//	                      in the order the kernel reads them: ql[t] the
//	                      low 4 bits as Q4_K's q[t]; qh[s] the high 2
//	                      bits, bits 0-1 / 2-3 for the low / high nibbles
//	                      of ql[2s], 4-5 / 6-7 for ql[2s+1]; then
//	                      sc[16][16] int8 scales (values unsigned 0 … 63:
//	                      the 32·scale offset is removed with the
//	                      activations' sums). With ql and qh in two runs
//	                      of the block instead, decode read Q6_K weights
//	                      at about 15 % less bandwidth (Zen 5, 2 threads)
//	     tail (32 B):   d[16] fp16
//	Q8_0 pair (1088 B): two bodies q[8][64]: values 4m … 4m+3 of each row
//	                      plus 128; then the two blocks' d[16] fp16 (an
//	                      odd last block leaves its pair's second half
//	                      unused)
//
// With the Q4_K and Q8_0 scales in tails after the group's blocks, the
// kernels streamed 2 048-column matrices 10–20 % slower in fast memory
// windows (scripts/kernelbw, Zen 5). A Q4_K block is 64 bytes larger than
// the 16 rows it comes from (2.8 %, the 6-bit scales and mins kept a byte
// each); Q6_K's and Q8_0's are the same size (but for an odd Q8_0 block
// count's unused half pair).

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kernels_il.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_vnni.h"

// HX_RJ is the activation tile of the packed kernels; from HX_IL_MIN
// activation rows the groups are unpacked to bytes for the interleaved
// prefill kernels instead.
#define HX_RJ 4
// HX_RPF is how far ahead (bytes) the kernels ask for the weights they
// will read: decode consumes them faster than the hardware prefetchers
// fetch them on their own.
#ifndef HX_RPF
#define HX_RPF 8192
#endif
#define HX_PF(p) _mm_prefetch((const char *)(p) + HX_RPF, _MM_HINT_T0)

// hx_r8_act is what the Q8_0 kernel needs of one activation block besides
// its values: its scale and −128 times the sum of its values.
typedef struct {
	float d;
	int32_t neg;
} hx_r8_act;

// HX_Q6_QL(t) and HX_Q6_QH(s) are the offsets in a packed Q6_K block of
// ql[t] and qh[s] (the layout above: one stream in the kernel's order).
#define HX_Q6_QL(t) (192 * ((t) >> 1) + 64 * ((t) & 1))
#define HX_Q6_QH(s) (192 * (s) + 128)

// HX_K4_BLOCK is a packed Q4_K block: its 2 304-byte body, then its rows'
// d (at HX_K4_D) and dmin (at HX_K4_DMIN).
#define HX_K4_BLOCK 2368
#define HX_K4_D 2304
#define HX_K4_DMIN 2336
// HX_Q6_BODY is a packed Q6_K block's body; a group's nb bodies are
// followed by their rows' d, HX_Q6_TAIL bytes a block.
#define HX_Q6_BODY 3328
#define HX_Q6_TAIL 32
// hx_q8_at and hx_q8_d are the offsets in a packed Q8_0 group of block i's
// body and of its rows' d: blocks go in pairs of 1 088 bytes, two bodies
// and then their two d[16].
static inline size_t hx_q8_at(int i) { return (size_t)(i / 2) * 1088 + 512 * (size_t)(i & 1); }
static inline size_t hx_q8_d(int i) { return (size_t)(i / 2) * 1088 + 1024 + 32 * (size_t)(i & 1); }
static int hx_r16_vals(int type) { return type == HX_Q8_0 ? 32 : 256; }

size_t hx_r16_group_bytes(int type, int n) {
	if (type != HX_Q4_K && type != HX_Q6_K && type != HX_Q8_0) return 0;
	size_t nb = (size_t)(n / hx_r16_vals(type));
	if (type == HX_Q8_0) return (nb + 1) / 2 * 1088;
	const size_t block = type == HX_Q4_K ? HX_K4_BLOCK : HX_Q6_BODY + HX_Q6_TAIL;
	return (nb * block + 63) / 64 * 64;
}

HX_VNNI static void hx_r16_pack_q4_k(const uint8_t *w, size_t rb, int nb, uint8_t *g) {
	for (int i = 0; i < nb; i++) {
		uint8_t *o = g + (size_t)i * HX_K4_BLOCK;
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 144;
			for (int t = 0; t < 32; t++) memcpy(o + 64 * t + 4 * r, wb + 16 + 4 * t, 4);
			uint8_t sm[16]; // 8 scales, 8 mins
			_mm_storeu_si128((__m128i *)sm, hx_k4_scales(wb + 4));
			for (int sb = 0; sb < 8; sb++) {
				o[2048 + 16 * sb + r] = sm[sb];
				o[2176 + 32 * (sb / 2) + 2 * r + sb % 2] = sm[8 + sb];
			}
			memcpy(o + HX_K4_D + 2 * r, wb, 2);
			memcpy(o + HX_K4_DMIN + 2 * r, wb + 2, 2);
		}
	}
}

static void hx_r16_pack_q6_k(const uint8_t *w, size_t rb, int nb, uint8_t *g) {
	uint8_t *tail = g + (size_t)nb * HX_Q6_BODY;
	for (int i = 0; i < nb; i++) {
		uint8_t *o = g + (size_t)i * HX_Q6_BODY;
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 210;
			uint8_t v[256];
			for (int h = 0; h < 2; h++) {
				const uint8_t *ql = wb + 64 * h, *qh = wb + 128 + 32 * h;
				for (int l = 0; l < 32; l++) {
					v[128 * h + l] = (uint8_t)((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
					v[128 * h + l + 32] = (uint8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
					v[128 * h + l + 64] = (uint8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
					v[128 * h + l + 96] = (uint8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
				}
			}
			for (int t = 0; t < 32; t++) {
				const int c = t / 8, k = t % 8, s = t / 2, e = t % 2;
				for (int b = 0; b < 4; b++) {
					const uint8_t lo = v[64 * c + 4 * k + b], hi = v[64 * c + 32 + 4 * k + b];
					o[HX_Q6_QL(t) + 4 * r + b] = (uint8_t)((lo & 0xF) | ((hi & 0xF) << 4));
					uint8_t *qh = o + HX_Q6_QH(s) + 4 * r + b;
					*qh = (uint8_t)((*qh & ~(0xF << (4 * e))) | (((lo >> 4) | ((hi >> 4) << 2)) << (4 * e)));
				}
			}
			for (int sb = 0; sb < 16; sb++) o[3072 + 16 * sb + r] = wb[192 + sb];
			memcpy(tail + 32 * i + 2 * r, wb + 208, 2);
		}
	}
}

static void hx_r16_pack_q8_0(const uint8_t *w, size_t rb, int nb, uint8_t *g) {
	for (int i = 0; i < nb; i++) {
		uint8_t *o = g + hx_q8_at(i);
		for (int r = 0; r < HX_IL; r++) {
			const uint8_t *wb = w + (size_t)r * rb + (size_t)i * 34;
			for (int m = 0; m < 8; m++)
				for (int b = 0; b < 4; b++) o[64 * m + 4 * r + b] = (uint8_t)(wb[2 + 4 * m + b] ^ 0x80);
			memcpy(g + hx_q8_d(i) + 2 * r, wb, 2);
		}
	}
}

HX_VNNI void hx_r16_pack(int type, const uint8_t *w, size_t rb, int ng, int n, uint8_t *dst) {
	const size_t gb = hx_r16_group_bytes(type, n);
	const int nb = n / hx_r16_vals(type);
	for (int g = 0; g < ng; g++) {
		uint8_t *o = dst + (size_t)g * gb;
		memset(o, 0, gb);
		const uint8_t *wg = w + (size_t)g * HX_IL * rb;
		if (type == HX_Q4_K) hx_r16_pack_q4_k(wg, rb, nb, o);
		else if (type == HX_Q6_K) hx_r16_pack_q6_k(wg, rb, nb, o);
		else if (type == HX_Q8_0) hx_r16_pack_q8_0(wg, rb, nb, o);
	}
}

HX_VNNI static inline __m512i hx_bcast(const uint8_t *p) {
	int32_t v;
	memcpy(&v, p, 4);
	return _mm512_set1_epi32(v);
}

HX_VNNI static inline __m512 hx_r16_d(const uint8_t *p) {
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

HX_VNNI static inline __m512i hx_u8x16(const uint8_t *p) {
	return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
}

// hx_r16_q4_k_body multiplies one packed Q4_K group with nj ≤ HX_RJ
// activation rows (Q8_K, xs apart; bp: each row's activation sums of
// pairs of sub-blocks as int16 pairs, 4 per block, bs apart) into
// out[j·os + ρ].
HX_VNNI static inline __attribute__((always_inline)) void hx_r16_q4_k_body(const uint8_t *p, int nb, const uint8_t *x, size_t xs, const int32_t *bp, size_t bs, int nj, float *out, size_t os) {
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	__m512 f[HX_RJ];
	for (int j = 0; j < nj; j++) f[j] = _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const uint8_t *b = p + (size_t)i * HX_K4_BLOCK;
		__m512i is[HX_RJ], ms[HX_RJ];
		for (int j = 0; j < nj; j++) is[j] = ms[j] = _mm512_setzero_si512();
		for (int c = 0; c < 4; c++) {
			__m512i lo[HX_RJ], hi[HX_RJ];
			for (int j = 0; j < nj; j++) lo[j] = hi[j] = _mm512_setzero_si512();
			for (int k = 0; k < 8; k++) {
				HX_PF(b + 64 * (8 * c + k));
				const __m512i v = _mm512_loadu_si512((const void *)(b + 64 * (8 * c + k)));
				const __m512i vl = _mm512_and_si512(v, m4), vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
				for (int j = 0; j < nj; j++) {
					const uint8_t *xq = x + (size_t)j * xs + (size_t)i * 292 + 4 + 64 * c + 4 * k;
					lo[j] = _mm512_dpbusd_epi32(lo[j], vl, hx_bcast(xq));
					hi[j] = _mm512_dpbusd_epi32(hi[j], vh, hx_bcast(xq + 32));
				}
			}
			const __m512i sl = hx_u8x16(b + 2048 + 32 * c), sh = hx_u8x16(b + 2048 + 32 * c + 16);
			for (int j = 0; j < nj; j++)
				is[j] = _mm512_add_epi32(is[j], _mm512_add_epi32(_mm512_mullo_epi32(lo[j], sl), _mm512_mullo_epi32(hi[j], sh)));
		}
		for (int q = 0; q < 5; q++) HX_PF(b + 2048 + 64 * q);
		for (int q = 0; q < 4; q++) {
			const __m512i mv = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(b + 2176 + 32 * q)));
			for (int j = 0; j < nj; j++) ms[j] = _mm512_dpwssd_epi32(ms[j], mv, _mm512_set1_epi32(bp[(size_t)j * bs + 4 * (size_t)i + q]));
		}
		const __m512 d = hx_r16_d(b + HX_K4_D), dm = hx_r16_d(b + HX_K4_DMIN);
		for (int j = 0; j < nj; j++) {
			float dy;
			memcpy(&dy, x + (size_t)j * xs + (size_t)i * 292, 4);
			const __m512 y = _mm512_set1_ps(dy);
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[j]), _mm512_mul_ps(d, y), f[j]);
			f[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms[j]), _mm512_mul_ps(dm, y), f[j]);
		}
	}
	for (int j = 0; j < nj; j++) _mm512_storeu_ps(out + (size_t)j * os, f[j]);
}

// hx_r16_q6_k_body is hx_r16_q4_k_body for Q6_K; o32: each row's 32·Σx
// per sub-block of 16, 16 per block, bs apart.
HX_VNNI static inline __attribute__((always_inline)) void hx_r16_q6_k_body(const uint8_t *p, int nb, const uint8_t *x, size_t xs, const int32_t *o32, size_t bs, int nj, float *out, size_t os) {
	const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
	const uint8_t *tail = p + (size_t)nb * HX_Q6_BODY;
	__m512 f[HX_RJ];
	for (int j = 0; j < nj; j++) f[j] = _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const uint8_t *b = p + (size_t)i * HX_Q6_BODY;
		__m512i is[HX_RJ];
		for (int j = 0; j < nj; j++) is[j] = _mm512_setzero_si512();
		for (int c = 0; c < 4; c++)
		for (int half = 0; half < 2; half++) {
			__m512i lo[HX_RJ], hi[HX_RJ];
			for (int j = 0; j < nj; j++) lo[j] = hi[j] = _mm512_setzero_si512();
			for (int kk = 0; kk < 4; kk++) {
				const int k = 4 * half + kk, t = 8 * c + k;
				HX_PF(b + HX_Q6_QL(t));
				if (t & 1) HX_PF(b + HX_Q6_QH(t / 2));
				const __m512i v = _mm512_loadu_si512((const void *)(b + HX_Q6_QL(t)));
				const __m512i h = _mm512_loadu_si512((const void *)(b + HX_Q6_QH(t / 2)));
				const __m512i hl = (t & 1) ? h : _mm512_slli_epi16(h, 4);
				const __m512i hh = (t & 1) ? _mm512_srli_epi16(h, 2) : _mm512_slli_epi16(h, 2);
				const __m512i vl = _mm512_or_si512(_mm512_and_si512(v, m4), _mm512_and_si512(hl, m30));
				const __m512i vh = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4), _mm512_and_si512(hh, m30));
				for (int j = 0; j < nj; j++) {
					const uint8_t *xq = x + (size_t)j * xs + (size_t)i * 292 + 4 + 64 * c + 4 * k;
					lo[j] = _mm512_dpbusd_epi32(lo[j], vl, hx_bcast(xq));
					hi[j] = _mm512_dpbusd_epi32(hi[j], vh, hx_bcast(xq + 32));
				}
			}
			const int sbl = 4 * c + half, sbh = 4 * c + 2 + half;
			const __m512i sl = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 3072 + 16 * sbl)));
			const __m512i sh = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 3072 + 16 * sbh)));
			for (int j = 0; j < nj; j++) {
				const int32_t *oj = o32 + (size_t)j * bs + 16 * (size_t)i;
				const __m512i a = _mm512_sub_epi32(lo[j], _mm512_set1_epi32(oj[sbl]));
				const __m512i e = _mm512_sub_epi32(hi[j], _mm512_set1_epi32(oj[sbh]));
				is[j] = _mm512_add_epi32(is[j], _mm512_add_epi32(_mm512_mullo_epi32(a, sl), _mm512_mullo_epi32(e, sh)));
			}
		}
		for (int q = 0; q < 4; q++) HX_PF(b + 3072 + 64 * q);
		const __m512 d = hx_r16_d(tail + 32 * i);
		for (int j = 0; j < nj; j++) {
			float dy;
			memcpy(&dy, x + (size_t)j * xs + (size_t)i * 292, 4);
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[j]), _mm512_mul_ps(d, _mm512_set1_ps(dy)), f[j]);
		}
	}
	for (int j = 0; j < nj; j++) _mm512_storeu_ps(out + (size_t)j * os, f[j]);
}

// hx_r16_q8_0_body multiplies one packed Q8_0 group with nj ≤ HX_RJ
// activation rows (Q8_0, xs apart; xa: each block's scale and −128·Σx, nb
// per row, bs apart).
HX_VNNI static inline __attribute__((always_inline)) void hx_r16_q8_0_body(const uint8_t *p, int nb, const uint8_t *x, size_t xs, const hx_r8_act *xa, size_t bs, int nj, float *out, size_t os) {
	__m512 f[HX_RJ];
	for (int j = 0; j < nj; j++) f[j] = _mm512_setzero_ps();
	for (int i = 0; i < nb; i++) {
		const uint8_t *b = p + hx_q8_at(i);
		__m512i acc[HX_RJ];
		for (int j = 0; j < nj; j++) acc[j] = _mm512_set1_epi32(xa[(size_t)j * bs + i].neg);
		for (int m = 0; m < 8; m++) {
			HX_PF(b + 64 * m);
			const __m512i v = _mm512_loadu_si512((const void *)(b + 64 * m));
			for (int j = 0; j < nj; j++)
				acc[j] = _mm512_dpbusd_epi32(acc[j], v, hx_bcast(x + (size_t)j * xs + (size_t)i * 34 + 2 + 4 * m));
		}
		if (i & 1) HX_PF(p + hx_q8_d(i)); // the pair's d line, which no body line's prefetch covers
		const __m512 d = hx_r16_d(p + hx_q8_d(i));
		for (int j = 0; j < nj; j++)
			f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[j]), _mm512_mul_ps(d, _mm512_set1_ps(xa[(size_t)j * bs + i].d)), f[j]);
	}
	for (int j = 0; j < nj; j++) _mm512_storeu_ps(out + (size_t)j * os, f[j]);
}

#define HX_RFN(name, body, T) \
	HX_VNNI static void name(const uint8_t *p, int nb, const uint8_t *x, size_t xs, const T *a, size_t bs, int nj, float *out, size_t os) { \
		switch (nj) { \
		case 1: body(p, nb, x, xs, a, bs, 1, out, os); break; \
		case 2: body(p, nb, x, xs, a, bs, 2, out, os); break; \
		case 3: body(p, nb, x, xs, a, bs, 3, out, os); break; \
		default: body(p, nb, x, xs, a, bs, HX_RJ, out, os); break; \
		} \
	}
HX_RFN(hx_r16_q4_k, hx_r16_q4_k_body, int32_t)
HX_RFN(hx_r16_q6_k, hx_r16_q6_k_body, int32_t)
HX_RFN(hx_r16_q8_0, hx_r16_q8_0_body, hx_r8_act)

// hx_r16_sums fills a (nb·per values per activation row) with what the
// kernel of type needs of the activations' sums: Q4_K the sums of each
// pair of sub-blocks of 32 as int16 pairs (per = 4), Q6_K 32 times the sums
// of 16 (per = 16).
HX_VNNI static void hx_r16_sums(int type, const uint8_t *x, size_t xs, int nx, int nb, int32_t *a) {
	const int per = type == HX_Q4_K ? 4 : 16;
	for (int j = 0; j < nx; j++)
		for (int i = 0; i < nb; i++) {
			int16_t bs[16];
			memcpy(bs, x + (size_t)j * xs + (size_t)i * 292 + 260, 32);
			int32_t *o = a + ((size_t)j * nb + i) * per;
			if (type == HX_Q6_K) {
				for (int sb = 0; sb < 16; sb++) o[sb] = 32 * bs[sb];
				continue;
			}
			for (int q = 0; q < 4; q++) {
				const int32_t b0 = bs[4 * q] + bs[4 * q + 1], b1 = bs[4 * q + 2] + bs[4 * q + 3];
				o[q] = (int32_t)(((uint32_t)b0 & 0xFFFFu) | ((uint32_t)b1 << 16));
			}
		}
}

HX_VNNI static void hx_r8_acts(const uint8_t *x, size_t xs, int nx, int nb, hx_r8_act *a) {
	for (int j = 0; j < nx; j++)
		for (int i = 0; i < nb; i++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 34;
			// Σx: the values made unsigned (x+128) summed in groups of 8 by vpsadbw
			const __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(xb + 2)), _mm256_set1_epi8((char)0x80));
			const __m256i q = _mm256_sad_epu8(u, _mm256_setzero_si256());
			const __m128i h2 = _mm_add_epi64(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
			const int32_t s = (int32_t)(_mm_cvtsi128_si64(h2) + _mm_extract_epi64(h2, 1)) - 128 * 32;
			uint16_t h;
			memcpy(&h, xb, 2);
			a[(size_t)j * nb + i] = (hx_r8_act){_cvtsh_ss(h), -128 * s};
		}
}

int hx_r16_rows(int type, const uint8_t *p, int ng, const uint8_t *x, size_t xs, int nx, int n, float *out, size_t os) {
	const int nb = n / hx_r16_vals(type);
	const size_t gb = hx_r16_group_bytes(type, n);
	if (nx >= HX_IL_MIN)
		return type == HX_Q8_0 ? hx_il8_packed_rows(p, gb, ng, x, xs, nx, nb, out, os)
		                       : hx_il_packed_rows(type, p, gb, ng, x, xs, nx, nb, out, os);
	const size_t per = type == HX_Q4_K ? 4 : type == HX_Q6_K ? 16 : 2;
	void *a = malloc((size_t)nx * nb * per * sizeof(int32_t));
	if (!a) return 0;
	if (type == HX_Q8_0) hx_r8_acts(x, xs, nx, nb, a);
	else hx_r16_sums(type, x, xs, nx, nb, a);
	const size_t bs = (size_t)nb * (type == HX_Q8_0 ? 1 : per);
	// A Q6_K group's row scales sit after its block bodies, a second
	// stream the kernel reads from the group's first block on, which
	// HX_PF's distance reaches only near the group's end: ask for the next
	// group's scales while this one runs (it made Q8_0 decode products 3–11 %
	// faster when Q8_0 had such tails). Q4_K and Q8_0 blocks carry theirs.
	const size_t tb = type == HX_Q6_K ? (size_t)nb * HX_Q6_TAIL : 0, to = (size_t)nb * HX_Q6_BODY;
	hx_prefetch_lines(p + to, tb);
	for (int g = 0; g < ng; g++) {
		const uint8_t *pg = p + (size_t)g * gb;
		if (g + 1 < ng) hx_prefetch_lines(pg + gb + to, tb);
		for (int j0 = 0; j0 < nx; j0 += HX_RJ) {
			const int nj = nx - j0 < HX_RJ ? nx - j0 : HX_RJ;
			const uint8_t *xj = x + (size_t)j0 * xs;
			float *o = out + (size_t)j0 * os + (size_t)g * HX_IL;
			if (type == HX_Q4_K) hx_r16_q4_k(pg, nb, xj, xs, (const int32_t *)a + (size_t)j0 * bs, bs, nj, o, os);
			else if (type == HX_Q6_K) hx_r16_q6_k(pg, nb, xj, xs, (const int32_t *)a + (size_t)j0 * bs, bs, nj, o, os);
			else hx_r16_q8_0(pg, nb, xj, xs, (const hx_r8_act *)a + (size_t)j0 * bs, bs, nj, o, os);
		}
	}
	free(a);
	return 1;
}

// hx_r16_to_il unpacks a packed Q4_K or Q6_K group to bytes: vector t =
// 8c+k's low values are hx_il_block's q[16c+k], its high ones q[16c+8+k].
HX_VNNI void hx_r16_to_il(int type, const uint8_t *p, int nb, hx_il_block *out) {
	const int q6 = type == HX_Q6_K, body = q6 ? HX_Q6_BODY : HX_K4_BLOCK;
	const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
	const uint8_t *tail = p + (size_t)nb * HX_Q6_BODY; // Q6_K's; a Q4_K block holds its own
	for (int i = 0; i < nb; i++) {
		const uint8_t *b = p + (size_t)i * body;
		hx_il_block *o = out + i;
		for (int t = 0; t < 32; t++) {
			const __m512i v = _mm512_loadu_si512((const void *)(b + (q6 ? HX_Q6_QL(t) : 64 * t)));
			__m512i vl = _mm512_and_si512(v, m4), vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
			if (q6) {
				const __m512i h = _mm512_loadu_si512((const void *)(b + HX_Q6_QH(t / 2)));
				const __m512i hl = (t & 1) ? h : _mm512_slli_epi16(h, 4);
				const __m512i hh = (t & 1) ? _mm512_srli_epi16(h, 2) : _mm512_slli_epi16(h, 2);
				vl = _mm512_or_si512(vl, _mm512_and_si512(hl, m30));
				vh = _mm512_or_si512(vh, _mm512_and_si512(hh, m30));
			}
			_mm512_store_si512((void *)o->q[16 * (t / 8) + t % 8], vl);
			_mm512_store_si512((void *)o->q[16 * (t / 8) + 8 + t % 8], vh);
		}
		for (int sb = 0; sb < (q6 ? 16 : 8); sb++) {
			const __m128i v = _mm_loadu_si128((const __m128i *)(b + 2048 + (q6 ? 1024 : 0) + 16 * sb));
			_mm512_store_si512((void *)o->sc[sb], q6 ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v));
		}
		if (q6) {
			_mm512_store_ps(o->d, hx_r16_d(tail + 32 * i));
			continue;
		}
		_mm512_store_ps(o->d, hx_r16_d(b + HX_K4_D));
		_mm512_store_ps(o->dmin, hx_r16_d(b + HX_K4_DMIN));
		for (int sb = 0; sb < 8; sb++) {
			uint8_t m[16];
			for (int r = 0; r < HX_IL; r++) m[r] = b[2176 + 32 * (sb / 2) + 2 * r + sb % 2];
			_mm512_store_si512((void *)o->mn[sb], hx_u8x16(m));
		}
	}
}

HX_VNNI void hx_r16_to_il8(const uint8_t *p, int nb, hx_il8_block *out) {
	for (int i = 0; i < nb; i++) {
		memcpy(out[i].q, p + hx_q8_at(i), 512);
		_mm512_store_ps(out[i].d, hx_r16_d(p + hx_q8_d(i)));
	}
}

#else
size_t hx_r16_group_bytes(int type, int n) { (void)type; (void)n; return 0; }
void hx_r16_pack(int type, const uint8_t *w, size_t rb, int ng, int n, uint8_t *dst) {
	(void)type; (void)w; (void)rb; (void)ng; (void)n; (void)dst;
}
int hx_r16_rows(int type, const uint8_t *p, int ng, const uint8_t *x, size_t xs, int nx, int n, float *out, size_t os) {
	(void)type; (void)p; (void)ng; (void)x; (void)xs; (void)nx; (void)n; (void)out; (void)os;
	return 0;
}
#endif
