//go:build cgo && !purego

// Vector attention for one (query row, KV head) pair: the g query heads
// that share the KV head are scored against every cached position at once
// (each key row is read once for the group), then softmax (sum in double,
// as the Go kernel) and the weighted sum of the value rows. Float sums run
// in vector lanes, so results differ from the Go kernel by rounding only.

#include <math.h>
#include <stdint.h>
#include "attn.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_AVX512 __attribute__((target("avx512f,avx512dq,fma,f16c")))

int hx_attn_simd(void) {
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma") &&
	       __builtin_cpu_supports("f16c");
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

// HX_KV_ROW is cached row first+j (first: the first position a query
// sees, 0 without a sliding window) through the block table.
#define HX_KV_ROW(base, j) ((base) + ((size_t)blocks[((j) + first) / bs] * bs + ((j) + first) % bs) * kvdim + kvoff)

// HX_KV_AHEAD is how many cached rows ahead the loops prefetch: each row of
// one head lies in its own page of the cache (rows are kvdim values apart),
// where the hardware prefetchers do not follow, so a decode step would wait
// on memory for every key and value.
#define HX_KV_AHEAD 6
// HX_TILE is how many (query row, head) pairs hx_attend_tile computes
// together: their value accumulators (two vectors each) fill 16 registers.
#define HX_TILE 8

HX_AVX512 static inline void hx_prefetch_bytes(const void *p, size_t n) {
	for (size_t i = 0; i < n; i += 64) _mm_prefetch((const char *)p + i, _MM_HINT_T0);
}

// The attention kernels over an F32 cache (hx_attend_f32) and an F16 one
// (hx_attend_f16): attn_kv.h written once, instantiated per element type.
#define KV_T float
#define KV_SUF(name) name##_f32
#define KV_LOAD(p) _mm512_loadu_ps(p)
#define KV_AT(p, i) ((p)[i])
#include "attn_kv.h"
#undef KV_T
#undef KV_SUF
#undef KV_LOAD
#undef KV_AT

#define KV_T uint16_t
#define KV_SUF(name) name##_f16
#define KV_LOAD(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define KV_AT(p, i) _cvtsh_ss((p)[i])
#include "attn_kv.h"
#undef KV_T
#undef KV_SUF
#undef KV_LOAD
#undef KV_AT

void hx_attend(const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	hx_attend_simd_f32(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
}

void hx_attend16(const float *q, float *out, int g, int d, const uint16_t *kl, const uint16_t *vl,
                 const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	hx_attend_simd_f16(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
}

int hx_attend_tile_rows(int g, int d) { return g <= HX_TILE && HX_TILE % g == 0 && d % 32 == 0 ? HX_TILE / g : 0; }

void hx_attend_tile(const float *q, long qs, float *out, int r, int g, int d, const float *kl, const float *vl,
                    const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	hx_attend_tile_f32(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
}

void hx_attend_tile16(const float *q, long qs, float *out, int r, int g, int d, const uint16_t *kl, const uint16_t *vl,
                      const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	hx_attend_tile_f16(q, (size_t)qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
}

HX_AVX512 static void hx_to_f16_simd(const float *x, uint16_t *out, int n) {
	int i = 0;
	for (; i + 16 <= n; i += 16)
		_mm256_storeu_si256((__m256i *)(out + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	for (; i < n; i++) out[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

void hx_to_f16(const float *x, uint16_t *out, int n) { hx_to_f16_simd(x, out, n); }

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

void hx_swiglu(const float *gate, const float *up, float *out, int n) { hx_swiglu_simd(gate, up, out, n); }

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
void hx_attend(const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	(void)q; (void)out; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim; (void)kvoff;
	(void)n; (void)first; (void)scale; (void)scores;
}
void hx_swiglu(const float *gate, const float *up, float *out, int n) { (void)gate; (void)up; (void)out; (void)n; }
void hx_attend16(const float *q, float *out, int g, int d, const uint16_t *kl, const uint16_t *vl,
                 const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores) {
	(void)q; (void)out; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim; (void)kvoff;
	(void)n; (void)first; (void)scale; (void)scores;
}
void hx_to_f16(const float *x, uint16_t *out, int n) { (void)x; (void)out; (void)n; }
int hx_attend_tile_rows(int g, int d) { (void)g; (void)d; return 0; }
void hx_attend_tile(const float *q, long qs, float *out, int r, int g, int d, const float *kl, const float *vl,
                    const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	(void)q; (void)qs; (void)out; (void)r; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim;
	(void)kvoff; (void)n0; (void)window; (void)scale; (void)scores;
}
void hx_attend_tile16(const float *q, long qs, float *out, int r, int g, int d, const uint16_t *kl, const uint16_t *vl,
                      const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores) {
	(void)q; (void)qs; (void)out; (void)r; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim;
	(void)kvoff; (void)n0; (void)window; (void)scale; (void)scores;
}
void hx_conv_silu(const float *x, const float *st, const float *wt, float *out, int ch, int k, int n, int c0, int c1) {
	(void)x; (void)st; (void)wt; (void)out; (void)ch; (void)k; (void)n; (void)c0; (void)c1;
}
#endif
