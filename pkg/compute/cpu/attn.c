//go:build cgo && !purego

// Vector attention for one (query row, KV head) pair: the g query heads
// that share the KV head are scored against every cached position at once
// (each key row is read once for the group), then softmax (sum in double,
// as the Go kernel) and the weighted sum of the value rows. Float sums run
// in vector lanes, so results differ from the Go kernel by rounding only.
// The kernels are built twice, for AVX-512 and for AVX2+FMA (isa 2 and 1
// at the entry points; attn_isa.h instantiates them).

#include <math.h>
#include <stdint.h>
#include "attn.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_AVX512 __attribute__((target("avx512f,avx512dq,fma,f16c")))
#define HX_AVX2F __attribute__((target("avx2,fma,f16c")))

int hx_attn_simd(void) {
	if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c")) return 0;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return 2;
	return __builtin_cpu_supports("avx2") ? 1 : 0;
}

// hx_exp512 is expf over 16 lanes (Cephes' range reduction and degree-5
// polynomial, as ggml's and most vector exps: within 2 ulp of expf for
// the scores' range; inputs below -87 flush to 0).
HX_AVX512 static inline __m512 hx_exp512(__m512 x) {
	const __m512 lo = _mm512_set1_ps(-87.3f), hi = _mm512_set1_ps(88.3f);
	x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
	__m512 fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
	x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), x);
	__m512 y = _mm512_set1_ps(1.9875691500E-4f);
	y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507E-3f));
	y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073E-3f));
	y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894E-2f));
	y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459E-1f));
	y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201E-1f));
	y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
	return _mm512_scalef_ps(y, fx);
}

// hx_reduce512 is the sum of v's 16 lanes in the order of GCC's
// _mm512_reduce_add_ps, written out so that every kernel (and every
// compiler) adds in the one order hx_reducev512 reproduces: the halves,
// then the quarters, then lanes 0+2 and 1+3 of the quarter, then those two.
HX_AVX512 static inline float hx_reduce512(__m512 v) {
	const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
	const __m128 f = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
	const __m128 e = _mm_add_ps(f, _mm_movehl_ps(f, f));
	return _mm_cvtss_f32(_mm_add_ss(e, _mm_movehdup_ps(e)));
}

// hx_reducev512 returns the 16 sums hx_reduce512(t[i]) in lane i, each
// added in the same order to the same bits, in 15 vector additions
// instead of 16 horizontal reductions.
HX_AVX512 static inline __m512 hx_reducev512(const __m512 *t) {
	__m512 c[8], e[4], f[2];
	// the halves: [t0 lo+hi | t1 lo+hi]
	for (int i = 0; i < 8; i++)
		c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0x44), _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0xEE));
	// the quarters: one 128-bit lane for each of four vectors
	for (int i = 0; i < 4; i++)
		e[i] = _mm512_add_ps(_mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], 0x88), _mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], 0xDD));
	// lanes 0+2 and 1+3
	for (int i = 0; i < 2; i++)
		f[i] = _mm512_add_ps(_mm512_shuffle_ps(e[2 * i], e[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
		                     _mm512_shuffle_ps(e[2 * i], e[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
	// and those two: lane 4·L+m holds the sum of t[4·m+L]
	const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(f[0], f[1], _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(f[0], f[1], _MM_SHUFFLE(3, 1, 3, 1)));
	return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r);
}

// hx_softmax512 turns sc[0..n) into probabilities (max subtracted, sum in
// double as the Go kernel does).
HX_AVX512 static void hx_softmax512(float *sc, int n) {
	__m512 mv = _mm512_set1_ps(-INFINITY);
	int j = 0;
	for (; j + 16 <= n; j += 16) mv = _mm512_max_ps(mv, _mm512_loadu_ps(sc + j));
	float mx = _mm512_reduce_max_ps(mv);
	for (; j < n; j++) mx = sc[j] > mx ? sc[j] : mx;
	__m512 m = _mm512_set1_ps(mx);
	__m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
	for (j = 0; j + 16 <= n; j += 16) {
		__m512 e = hx_exp512(_mm512_sub_ps(_mm512_loadu_ps(sc + j), m));
		_mm512_storeu_ps(sc + j, e);
		s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
		s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
	}
	double sum = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
	for (; j < n; j++) { sc[j] = expf(sc[j] - mx); sum += sc[j]; }
	__m512 inv = _mm512_set1_ps((float)(1 / sum));
	for (j = 0; j + 16 <= n; j += 16) _mm512_storeu_ps(sc + j, _mm512_mul_ps(_mm512_loadu_ps(sc + j), inv));
	float invs = (float)(1 / sum);
	for (; j < n; j++) sc[j] *= invs;
}

// hx_exp256 is hx_exp512 over 8 lanes (2^n built in the exponent bits:
// the clamp keeps n within the normal range).
HX_AVX2F static inline __m256 hx_exp256(__m256 x) {
	const __m256 lo = _mm256_set1_ps(-87.3f), hi = _mm256_set1_ps(88.3f);
	x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
	__m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
	__m256 y = _mm256_set1_ps(1.9875691500E-4f);
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
	y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
	return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

HX_AVX2F static inline float hx_hsum256(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// hx_reducev256 returns the 8 sums hx_hsum256(t[i]) in lane i, each
// added in the same order to the same bits: the halves of pairs, then
// lanes 0+2 and 1+3 of fours, then those two.
HX_AVX2F static inline __m256 hx_reducev256(const __m256 *t) {
	__m256 ab[4], h[2];
	for (int i = 0; i < 4; i++)
		ab[i] = _mm256_add_ps(_mm256_permute2f128_ps(t[2 * i], t[2 * i + 1], 0x20), _mm256_permute2f128_ps(t[2 * i], t[2 * i + 1], 0x31));
	for (int i = 0; i < 2; i++)
		h[i] = _mm256_add_ps(_mm256_shuffle_ps(ab[2 * i], ab[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
		                     _mm256_shuffle_ps(ab[2 * i], ab[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
	// [t0, t2, t4, t6 | t1, t3, t5, t7]
	const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(3, 1, 3, 1)));
	return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

HX_AVX2F static inline float hx_hmax256(__m256 v) {
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// hx_softmax256 is hx_softmax512 over 8 lanes.
HX_AVX2F static void hx_softmax256(float *sc, int n) {
	__m256 mv = _mm256_set1_ps(-INFINITY);
	int j = 0;
	for (; j + 8 <= n; j += 8) mv = _mm256_max_ps(mv, _mm256_loadu_ps(sc + j));
	float mx = hx_hmax256(mv);
	for (; j < n; j++) mx = sc[j] > mx ? sc[j] : mx;
	__m256 m = _mm256_set1_ps(mx);
	__m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
	for (j = 0; j + 8 <= n; j += 8) {
		__m256 e = hx_exp256(_mm256_sub_ps(_mm256_loadu_ps(sc + j), m));
		_mm256_storeu_ps(sc + j, e);
		s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
		s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
	}
	__m256d sd = _mm256_add_pd(s0, s1);
	__m128d h = _mm_add_pd(_mm256_castpd256_pd128(sd), _mm256_extractf128_pd(sd, 1));
	double sum = _mm_cvtsd_f64(h) + _mm_cvtsd_f64(_mm_unpackhi_pd(h, h));
	for (; j < n; j++) { sc[j] = expf(sc[j] - mx); sum += sc[j]; }
	__m256 inv = _mm256_set1_ps((float)(1 / sum));
	for (j = 0; j + 8 <= n; j += 8) _mm256_storeu_ps(sc + j, _mm256_mul_ps(_mm256_loadu_ps(sc + j), inv));
	float invs = (float)(1 / sum);
	for (; j < n; j++) sc[j] *= invs;
}

// hx_rowstep walks the cached rows of a block table one position after
// another (a division by the block size once, not once a row): blk and
// off are the position's block (an index into blocks) and its offset in
// it.
typedef struct {
	int blk, off;
} hx_rowstep;
static inline hx_rowstep hx_rowstep_at(int p, int bs) { return (hx_rowstep){p / bs, p % bs}; }
static inline void hx_rowstep_next(hx_rowstep *s, int bs) {
	if (++s->off == bs) s->off = 0, s->blk++;
}
// HX_STEP_ROW is the cached row at s (blocks, bs, kvdim and kvoff in
// scope).
#define HX_STEP_ROW(base, s) ((base) + ((size_t)blocks[(s).blk] * bs + (s).off) * kvdim + kvoff)

// HX_KV_AHEAD is how many cached rows ahead the loops prefetch: without,
// the hardware prefetchers did not keep up with a decode step's keys and
// values even where a head's rows are one run (BenchmarkAttention
// decode4096mem 1.1 against 0.5 ms on Zen 5); 16 rows ahead was no faster.
#define HX_KV_AHEAD 6
// HX_TILE is how many (query row, head) pairs hx_attend_tile computes
// together: their value accumulators (two vectors each) fill 16 registers.
#define HX_TILE 8
// HX_VBLK is how many positions hx_attend_tile sums before it moves to the
// next values of d (their rows of values stay in L1 meanwhile).
#define HX_VBLK 32
_Static_assert(HX_TILE % 4 == 0, "hx_attend_tile takes its pairs four at a time");

// hx_prefetch_bytes asks for the n bytes at p (one prefetch a cache line).
// The prefetch is an asm statement, not _mm_prefetch: GCC 12's dead code
// elimination (-ftree-dce, at -O1 and up) deleted loops that held nothing
// but the builtin in several kernels, so the decode kernels ran without
// their prefetches. (quant's kernels.h has the same helper,
// hx_prefetch_lines: cgo builds each package from its own directory.)
static inline __attribute__((always_inline)) void hx_prefetch_bytes(const void *p, size_t n) {
	for (size_t i = 0; i < n; i += 64) __asm__ volatile("prefetcht0 %0" : : "m"(*((const char *)p + i)));
}

// The attention kernels for AVX-512 (…_512) and for AVX2+FMA (…_256):
// attn_isa.h instantiates attn_kv.h per KV element type with the vector
// operations named here.
#define VA HX_AVX512
#define VT __m512
#define VW 16
#define V_TV 2 // value vectors per (row, head) pair in hx_attend_tile
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_LOADH(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define V_STOREU(p, v) _mm512_storeu_ps(p, v)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_REDUCE(v) hx_reduce512(v)
#define V_REDUCEV(t) hx_reducev512(t)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_PVACC 16 // accumulators of hx_pvn: half the registers
#define V_SOFTMAX(p, n) hx_softmax512(p, n)
#define ISA_SUF(name) name##_512
#include "attn_isa.h"

#define VA HX_AVX2F
#define VT __m256
#define VW 8
#define V_TV 1
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_LOADH(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define V_STOREU(p, v) _mm256_storeu_ps(p, v)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_REDUCE(v) hx_hsum256(v)
#define V_REDUCEV(t) hx_reducev256(t)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_PVACC 12 // accumulators of hx_pvn: the rest of the registers for values and weights
#define V_SOFTMAX(p, n) hx_softmax256(p, n)
#define ISA_SUF(name) name##_256
#include "attn_isa.h"

void hx_attend(int isa, const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	if (isa >= 2) hx_attend_simd_f32_512(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
	else hx_attend_simd_f32_256(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
}

void hx_attend16(int isa, const float *q, float *out, int g, int d, const uint16_t *kl, const uint16_t *vl,
                 const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	if (isa >= 2) hx_attend_simd_f16_512(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
	else hx_attend_simd_f16_256(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
}

int hx_attend_tile_rows(int g, int d) { return g <= HX_TILE && HX_TILE % g == 0 && d % 32 == 0 ? HX_TILE / g : 0; }

void hx_attend_tile(int isa, const float *q, long qs, float *out, int r, int g, int d, const float *kl, const float *vl,
                    const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	if (isa >= 2) hx_attend_tile_f32_512(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
	else hx_attend_tile_f32_256(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
}

void hx_attend_tile16(int isa, const float *q, long qs, float *out, int r, int g, int d, const uint16_t *kl, const uint16_t *vl,
                      const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	if (isa >= 2) hx_attend_tile_f16_512(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
	else hx_attend_tile_f16_256(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
}

HX_AVX512 static void hx_to_f16_simd(const float *x, uint16_t *out, int n) {
	int i = 0;
	for (; i + 16 <= n; i += 16)
		_mm256_storeu_si256((__m256i *)(out + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	for (; i < n; i++) out[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

HX_AVX2F static void hx_to_f16_256(const float *x, uint16_t *out, int n) {
	int i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	for (; i < n; i++) out[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

void hx_to_f16(int isa, const float *x, uint16_t *out, int n) {
	if (isa >= 2) hx_to_f16_simd(x, out, n);
	else hx_to_f16_256(x, out, n);
}

HX_AVX512 static void hx_swiglu_simd(const float *gate, const float *up, float *out, int n) {
	const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
	int i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 g = _mm512_loadu_ps(gate + i);
		__m512 e = hx_exp512(_mm512_xor_ps(g, sign));
		_mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_loadu_ps(up + i)));
	}
	for (; i < n; i++) out[i] = gate[i] / (1 + expf(-gate[i])) * up[i];
}

HX_AVX2F static void hx_swiglu_256(const float *gate, const float *up, float *out, int n) {
	const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
	int i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 g = _mm256_loadu_ps(gate + i);
		__m256 e = hx_exp256(_mm256_xor_ps(g, sign));
		_mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
	}
	for (; i < n; i++) out[i] = gate[i] / (1 + expf(-gate[i])) * up[i];
}

void hx_swiglu(int isa, const float *gate, const float *up, float *out, int n) {
	if (isa >= 2) hx_swiglu_simd(gate, up, out, n);
	else hx_swiglu_256(gate, up, out, n);
}

HX_AVX512 static void hx_conv_silu_simd(const float *x, const float *st, const float *wt, float *out, int ch, int k, int n, int c0, int c1) {
	const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
	for (int t = 0; t < n; t++) {
		int c = c0;
		for (; c + 16 <= c1; c += 16) {
			__m512 sum = _mm512_setzero_ps();
			for (int j = 0; j < k; j++) {
				int src = t - (k - 1) + j;
				const float *in = src < 0 ? st + (long)(k - 1 + src) * ch : x + (long)src * ch;
				sum = _mm512_fmadd_ps(_mm512_loadu_ps(in + c), _mm512_loadu_ps(wt + (long)j * ch + c), sum);
			}
			__m512 e = hx_exp512(_mm512_xor_ps(sum, sign));
			_mm512_storeu_ps(out + (long)t * ch + c, _mm512_div_ps(sum, _mm512_add_ps(one, e)));
		}
		for (; c < c1; c++) {
			float sum = 0;
			for (int j = 0; j < k; j++) {
				int src = t - (k - 1) + j;
				sum += (src < 0 ? st[(long)(k - 1 + src) * ch + c] : x[(long)src * ch + c]) * wt[(long)j * ch + c];
			}
			out[(long)t * ch + c] = sum / (1 + expf(-sum));
		}
	}
}

void hx_conv_silu(const float *x, const float *st, const float *wt, float *out, int ch, int k, int n, int c0, int c1) {
	hx_conv_silu_simd(x, st, wt, out, ch, k, n, c0, c1);
}
#else
int hx_attn_simd(void) { return 0; }
void hx_attend(int isa, const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	(void)isa; (void)q; (void)out; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim; (void)kvoff;
	(void)n; (void)first; (void)scale; (void)scores;
}
void hx_swiglu(int isa, const float *gate, const float *up, float *out, int n) { (void)isa; (void)gate; (void)up; (void)out; (void)n; }
void hx_attend16(int isa, const float *q, float *out, int g, int d, const uint16_t *kl, const uint16_t *vl,
                 const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	(void)isa; (void)q; (void)out; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim; (void)kvoff;
	(void)n; (void)first; (void)scale; (void)scores;
}
void hx_to_f16(int isa, const float *x, uint16_t *out, int n) { (void)isa; (void)x; (void)out; (void)n; }
int hx_attend_tile_rows(int g, int d) { (void)g; (void)d; return 0; }
void hx_attend_tile(int isa, const float *q, long qs, float *out, int r, int g, int d, const float *kl, const float *vl,
                    const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	(void)isa; (void)q; (void)qs; (void)out; (void)r; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim;
	(void)kvoff; (void)n0; (void)window; (void)scale; (void)scores;
}
void hx_attend_tile16(int isa, const float *q, long qs, float *out, int r, int g, int d, const uint16_t *kl, const uint16_t *vl,
                      const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	(void)isa; (void)q; (void)qs; (void)out; (void)r; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim;
	(void)kvoff; (void)n0; (void)window; (void)scale; (void)scores;
}
void hx_conv_silu(const float *x, const float *st, const float *wt, float *out, int ch, int k, int n, int c0, int c1) {
	(void)x; (void)st; (void)wt; (void)out; (void)ch; (void)k; (void)n; (void)c0; (void)c1;
}
#endif
