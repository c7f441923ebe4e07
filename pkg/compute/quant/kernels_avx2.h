#ifndef HELEXA_QUANT_KERNELS_AVX2_H
#define HELEXA_QUANT_KERNELS_AVX2_H
// What the AVX2 matrix-product kernels share: kernels_avx2.c (Q8_0, Q6_K,
// the side tables and the dispatch) and kernels_avx2_k4.c (Q4_K, Q5_K).
// Included only where the x86 intrinsics are available.
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels_k4.h"

#define HX_A2 __attribute__((target("avx2,fma,f16c")))
// HX_AN is the widest K-quant kernel over the activations' row layout: its
// accumulators and the decoded block fit AVX2's sixteen registers (Q6_K
// had three rows until its decode took fewer registers:
// BenchmarkPrefillTile Q6_K 40 → 45 G multiply-adds/s with four). Tiles of
// HX_K4T rows read them interleaved instead.
#define HX_AN 4
// HX_Q8T is Q8_0's tile: its sums take one register for eight activation
// rows, so the tile is two such groups, which share each broadcast of the
// weights and its absolute values (BenchmarkPrefillTile Q8_0 n1024: 48 →
// 53 G multiply-adds/s against one group; n3072, where sixteen rows' side
// table no longer fits L1: 47-48 → 50).
#define HX_Q8T 16
// HX_SIDE is the stack buffer (bytes) of hx_avx2_rows for what the kernels
// need of the activations: Q8_0 rows up to 1792 values (a tile of
// sixteen), the K-quants' up to 3584 (tiles of eight); wider rows take a
// buffer from the heap.
#define HX_SIDE 32768
// HX_PIN keeps an accumulator in a register at this point: without it GCC
// regroups the exact integer sums across chunks (and keeps the float
// accumulators in memory), spilling a third of the tile kernel's
// instructions to the stack (BenchmarkPrefillTile Q4_K: 40 → 44-48 G
// multiply-adds/s; Q6_K, whose sums it spilled until the thirteenth
// session: 43-44 → 46, DecodeRows from cache 19.4 → 21.2-21.7 GB/s).
#define HX_PIN(v) __asm__("" : "+x"(v))

// hx_a2_hsum adds the eight lanes of v.
HX_A2 static inline float hx_a2_hsum(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// HX_A2PF is how far ahead (bytes) the two-row decode kernels ask for the
// weights of each of their two streams.
#ifndef HX_A2PF
#define HX_A2PF 2048
#endif

// hx_a2_prefetch asks for the lines of the n bytes HX_A2PF past p.
static inline __attribute__((always_inline)) void hx_a2_prefetch(const uint8_t *p, int n) {
	hx_prefetch_lines(p + HX_A2PF, (size_t)n);
}

// hx_a2_fold4 sums the eight 32-bit lanes of each of a, b, c and d into
// one lane each, [a b c d], exact.
HX_A2 static inline __m128i hx_a2_fold4(__m256i a, __m256i b, __m256i c, __m256i d) {
	const __m256i ab = _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
	const __m256i cd = _mm256_add_epi32(_mm256_unpacklo_epi32(c, d), _mm256_unpackhi_epi32(c, d));
	const __m256i s = _mm256_add_epi32(_mm256_unpacklo_epi64(ab, cd), _mm256_unpackhi_epi64(ab, cd));
	return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

// hx_a2_hsum4 adds the four lanes of v.
HX_A2 static inline float hx_a2_hsum4(__m128 v) {
	v = _mm_add_ps(v, _mm_movehl_ps(v, v));
	v = _mm_add_ss(v, _mm_movehdup_ps(v));
	return _mm_cvtss_f32(v);
}

// hx_pfn is a decode kernel: a few weight rows (two, or four for Q8_0,
// hx_a_q8_0_p), rb bytes apart, times one activation row.
typedef void (*hx_pfn)(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb, float *out);
// hx_tfn is one weight row (w, and what hx_avx2_rows worked out of it once,
// wp, or null) times a group of activation rows (what hx_avx2_rows worked
// out of them, xa) whose number the kernel knows (hx_a_q8_0_16, hx_a_q4_k_3).
typedef void (*hx_tfn)(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os);

// One kernel per type for each number of activation rows up to the tile,
// the count known at compile time so that the accumulators stay in
// registers (with a count known only at run time they went through the
// stack: four streams of Llama-3.2-1B Q8_0, 32 → 38 tok/s with a kernel
// for four).
#define HX_AFN_K(name, call, k) \
	HX_A2 __attribute__((noinline)) static void name##_##k(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os) { call(k); }
// hx_k8a is what the Q4_K/Q5_K kernels read of one Q8_K activation block,
// copied or worked out once a tile instead of once a weight row: its
// values, 32-byte aligned (as hx_k6a's), the pair sums of its sixteen
// sums of 16 (ggml's vphaddw), and its scale.
typedef struct {
	int8_t q[256];
	int16_t ps[8];
	float dy;
	float pad[3];
} hx_k8a;
_Static_assert(sizeof(hx_k8a) % 32 == 0, "hx_k8a keeps the values of the next block aligned");

// hx_k4w is what the Q4_K/Q5_K tile kernels read of one weight block
// besides its values, decoded once a call instead of once a tile of
// activation rows: each sub-block's scale twice in 32 bits (read with a
// broadcast from memory, no shuffle), the mins as int16, and d and dmin.
typedef struct {
	uint32_t s[8];
	int16_t m[8];
	float dm[4];
} hx_k4w;
_Static_assert(sizeof(hx_k4w) % 32 == 0, "hx_k4w entries stay aligned");

// hx_k4_dm is the Q4_K/Q5_K block at wb's d and dmin (fp16) as floats
// (d, dmin, 0, 0).
HX_A2 static inline __m128 hx_k4_dm(const uint8_t *wb) {
	int32_t dmw;
	memcpy(&dmw, wb, 4);
	return _mm_cvtph_ps(_mm_cvtsi32_si128(dmw));
}

// hx_k4w_fill decodes the Q4_K/Q5_K block at wb into p. Inline: the tiles
// call it once a block, and a call there made them spill their vector
// registers around it.
HX_A2 static inline void hx_k4w_fill(hx_k4w *p, const uint8_t *wb) {
	const __m256i ms = _mm256_cvtepu8_epi16(hx_k4_scales(wb + 4)); // 8 scales, 8 mins as int16
	const __m128i sc = _mm256_castsi256_si128(ms);
	_mm_store_si128((__m128i *)p->s, _mm_unpacklo_epi16(sc, sc));
	_mm_store_si128((__m128i *)(p->s + 4), _mm_unpackhi_epi16(sc, sc));
	_mm_store_si128((__m128i *)p->m, _mm256_extracti128_si256(ms, 1));
	_mm_store_ps(p->dm, hx_k4_dm(wb));
}

// hx_q8x_g4 is the number of scales a Q8_0 side table keeps a block for a
// tile of g activation rows: g rounded up to four (the kernels read them
// four or eight at a time).
static inline int hx_q8x_g4(int g) { return (g + 3) & ~3; }

// hx_q8x_voff is where the values start in the Q8_0 side table of a tile
// of g activation rows of nb blocks (hx_q8x_fill), after the scales.
static inline size_t hx_q8x_voff(int nb, int g) { return ((size_t)nb * (size_t)hx_q8x_g4(g) * sizeof(float) + 31) & ~(size_t)31; }

// The Q8_0 kernels of kernels_avx2_q8.c: for 1 to 8 and HX_Q8T activation
// rows (hx_a_q8_0_k; 9 to 15 are null, hx_avx2_rows runs eight and the
// rest), four weight rows for decode, and the side table they read.
extern const hx_tfn hx_a_q8_0_k[HX_Q8T + 1];
HX_A2 void hx_a_q8_0_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb, float *out);
HX_A2 void hx_q8x_fill(uint8_t *side, const uint8_t *x, size_t xs, int g, int nb);
HX_A2 void hx_a_q8_0_w2(const uint8_t *w, size_t rb, size_t ro, const void *xa, int nb, float *out, size_t os);
HX_A2 void hx_a_q8_0_w2x4(const uint8_t *w, size_t rb, size_t ro, const void *xa, int nb, float *out, size_t os);

// HX_K4T is the K-quant tile: eight activation rows, their values
// interleaved four bytes at a time (hx_k4il), so that one vpmaddubsw makes
// products for four rows and four of them are summed in 16 bits before
// one vpmaddwd by the sub-block's scale, where a tile of HX_AN rows needs
// a vpmaddwd for each: BenchmarkPrefillTile Q4_K n1024 59-61 → 89-91 G
// multiply-adds/s, Q5_K 53 → 73-76; Q6_K (two vpmaddubsw a vpmaddwd,
// kernels_avx2_q6il.c) 46-47 → 67.
#define HX_K4T 8

// hx_k4il is the side table entry of one Q8_K block of the eight
// activation rows of a Q4_K/Q5_K tile (hx_k4il_fill): the values, [sub-block
// 8][four bytes kk 4][rows 0-3, 4-7][four rows' bytes 4kk.. | 16+4kk..];
// the sub-block sums, [pair of sub-blocks 4][row 8][2] as int16; the
// scales.
typedef struct {
	int8_t q[2048];
	int16_t bs[4][16];
	float dy[8];
} hx_k4il;
_Static_assert(sizeof(hx_k4il) % 32 == 0, "hx_k4il entries stay aligned");

// hx_q6il is the side table entry of one Q8_K block of the eight
// activation rows of a Q6_K tile (hx_q6il_fill): the values as hx_k4il's;
// the sums of sixteen, [pair of sums 8][row 8][2] as int16; the scales.
typedef struct {
	int8_t q[2048];
	int16_t bs[8][16];
	float dy[8];
} hx_q6il;
_Static_assert(sizeof(hx_q6il) % 32 == 0, "hx_q6il entries stay aligned");
HX_A2 void hx_q6il_fill(hx_q6il *a, const uint8_t *x, size_t xs, int ib);
HX_A2 void hx_a_q6_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os);

// HX_K4_BLOCK starts block i of the Q4_K/Q5_K tiles' weight row w (bsz
// bytes a block; Q5_K if q5): wb, its decoded scales p (from wp's table,
// or into own), and Q5_K's fifth bits qh.
#define HX_K4_BLOCK \
	const uint8_t *wb = w + (size_t)i * bsz; \
	const hx_k4w *p = wp ? wp + i : &own; \
	if (!wp) hx_k4w_fill(&own, wb); \
	const __m256i qh = q5 ? _mm256_loadu_si256((const __m256i *)(wb + 16)) : _mm256_setzero_si256()

// The Q4_K/Q5_K kernels of kernels_avx2_k4.c that kernels_avx2.c
// dispatches to, and what it builds for them.
HX_A2 void hx_k8a_fill(hx_k8a *a, const uint8_t *xb);
HX_A2 hx_k4w *hx_k4w_table(int type, const uint8_t *w, size_t rb, int nrows, int nb);
HX_A2 void hx_a_q4_k_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb, float *out);
HX_A2 void hx_a_q5_k_p(const uint8_t *w, size_t rb, size_t ro, const uint8_t *x, const void *xa, int nb, float *out);
extern const hx_tfn hx_a_q4_k_k[HX_K4T + 1], hx_a_q5_k_k[HX_K4T + 1];
HX_A2 void hx_il8_values(int8_t *q, const uint8_t *x, size_t xs, size_t o);
HX_A2 void hx_k4il_fill(hx_k4il *a, const uint8_t *x, size_t xs, int ib);
HX_A2 void hx_a_q4_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os);
HX_A2 void hx_a_q5_k_il(const uint8_t *w, const void *wp, const void *xa, int nb, float *out, size_t os);
#endif
