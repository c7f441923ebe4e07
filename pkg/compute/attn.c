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
#define HX_AVX512 __attribute__((target("avx512f,avx512dq,fma")))

int hx_attn_simd(void) { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"); }

HX_AVX512 static inline float hx_dot512(const float *a, const float *b, int d) {
	__m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
	int i = 0;
	for (; i + 32 <= d; i += 32) {
		s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
		s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
	}
	for (; i + 16 <= d; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
	float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
	for (; i < d; i++) s += a[i] * b[i];
	return s;
}

HX_AVX512 static inline void hx_axpy512(float *y, float a, const float *x, int d) {
	__m512 av = _mm512_set1_ps(a);
	int i = 0;
	for (; i + 16 <= d; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
	for (; i < d; i++) y[i] += a * x[i];
}

HX_AVX512 static void hx_attend_simd(const float *q, float *out, int g, int d, const float *kl, const float *vl,
                                     const int32_t *blocks, int bs, int kvdim, int kvoff, int n, float scale, float *scores) {
	for (int j = 0; j < n; j++) {
		const float *k = kl + ((size_t)blocks[j / bs] * bs + j % bs) * kvdim + kvoff;
		for (int h = 0; h < g; h++) scores[(size_t)h * n + j] = hx_dot512(q + (size_t)h * d, k, d) * scale;
	}
	for (int h = 0; h < g; h++) {
		float *sc = scores + (size_t)h * n;
		float mx = -INFINITY;
		for (int j = 0; j < n; j++) mx = sc[j] > mx ? sc[j] : mx;
		double sum = 0;
		for (int j = 0; j < n; j++) { sc[j] = expf(sc[j] - mx); sum += sc[j]; }
		float inv = (float)(1 / sum);
		for (int j = 0; j < n; j++) sc[j] *= inv;
		float *o = out + (size_t)h * d;
		for (int i = 0; i < d; i++) o[i] = 0;
	}
	for (int j = 0; j < n; j++) {
		const float *v = vl + ((size_t)blocks[j / bs] * bs + j % bs) * kvdim + kvoff;
		for (int h = 0; h < g; h++) hx_axpy512(out + (size_t)h * d, scores[(size_t)h * n + j], v, d);
	}
}

void hx_attend(const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, float scale, float *scores) {
	hx_attend_simd(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, scale, scores);
}
#else
int hx_attn_simd(void) { return 0; }
void hx_attend(const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, float scale, float *scores) {
	(void)q; (void)out; (void)g; (void)d; (void)kl; (void)vl; (void)blocks; (void)bs; (void)kvdim; (void)kvoff;
	(void)n; (void)scale; (void)scores;
}
#endif
