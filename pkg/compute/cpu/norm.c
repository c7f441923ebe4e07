//go:build cgo && !purego

// Row-wise kernels of the CPU backend in AVX2: RMSNorm, the residual add
// and RoPE. Each gives the Go kernel's bits: the same float operations in
// the same order. RMSNorm sums each row's squares in double, in order, as
// ggml and the Go kernel do, four rows side by side in the lanes of a
// vector; the products are rounded to float first, as float64(v*v) is.
// The functions are built for AVX2 without FMA, so that no product and sum
// are contracted into one rounding; where a product feeds a sum, HX_NPIN
// keeps it a rounded product even in a build with FMA enabled for the
// whole file (-march=native).

#include "norm.h"
#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_NORM __attribute__((target("avx2")))
#define HX_NPIN(v) __asm__("" : "+x"(v))

int hx_norm_simd(void) { return __builtin_cpu_supports("avx2"); }

// hx_sumsq_tail adds the squares of x[i0..n) to s in order.
static double hx_sumsq_tail(const float *x, int i0, int n, double s) {
	for (int i = i0; i < n; i++) s += (double)(x[i] * x[i]);
	return s;
}

// HX_SQ4 adds the squares of values i..i+3 of the four rows at r[0..3]
// to acc (lane k: row k), value by value.
#define HX_SQ4(r, acc) \
	do { \
		__m128 a = _mm_loadu_ps((r)[0] + i), b = _mm_loadu_ps((r)[1] + i), c = _mm_loadu_ps((r)[2] + i), d = _mm_loadu_ps((r)[3] + i); \
		a = _mm_mul_ps(a, a), b = _mm_mul_ps(b, b), c = _mm_mul_ps(c, c), d = _mm_mul_ps(d, d); \
		_MM_TRANSPOSE4_PS(a, b, c, d); \
		acc = _mm256_add_pd(acc, _mm256_cvtps_pd(a)); \
		acc = _mm256_add_pd(acc, _mm256_cvtps_pd(b)); \
		acc = _mm256_add_pd(acc, _mm256_cvtps_pd(c)); \
		acc = _mm256_add_pd(acc, _mm256_cvtps_pd(d)); \
	} while (0)

// hx_sumsq writes the sums of squares of nr (4 or 8) rows of n values at
// x to s: eight rows as two chains of additions in flight, where one
// waits on the latency of each.
HX_NORM static inline __attribute__((always_inline)) void hx_sumsq(const float *x, int n, int nr, double *s) {
	const float *r0[4], *r1[4]; // rows 0-3 and (nr = 8) 4-7
	for (int k = 0; k < 4; k++) r0[k] = x + (long)k * n, r1[k] = nr == 8 ? x + (long)(4 + k) * n : x;
	__m256d a0 = _mm256_setzero_pd(), a1 = a0;
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		HX_SQ4(r0, a0);
		if (nr == 8) HX_SQ4(r1, a1);
	}
	_mm256_storeu_pd(s, a0);
	if (nr == 8) _mm256_storeu_pd(s + 4, a1);
	for (int k = 0; k < nr; k++) s[k] = hx_sumsq_tail(x + (long)k * n, i, n, s[k]);
}

// hx_norm_row writes x times w, scaled as the Go kernel's normRow scales
// a row of sum of squares sum, to out.
HX_NORM static void hx_norm_row(const float *x, float *out, const float *w, int n, double sum, float eps) {
	const float mean = (float)(sum / (double)n);
	const float scale = 1.0f / (float)sqrt((double)(mean + eps));
	const __m256 sv = _mm256_set1_ps(scale);
	int i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), _mm256_loadu_ps(w + i)));
	for (; i < n; i++) out[i] = (x[i] * scale) * w[i];
}

HX_NORM void hx_rmsnorm(const float *x, float *out, const float *w, int rows, int n, float eps) {
	int r = 0;
	double s[8];
	while (r < rows) {
		const int nr = rows - r >= 8 ? 8 : rows - r >= 4 ? 4 : 1;
		const float *xr = x + (long)r * n;
		if (nr == 8) hx_sumsq(xr, n, 8, s);
		else if (nr == 4) hx_sumsq(xr, n, 4, s);
		else s[0] = hx_sumsq_tail(xr, 0, n, 0);
		for (int k = 0; k < nr; k++) hx_norm_row(xr + (long)k * n, out + (long)(r + k) * n, w, n, s[k], eps);
		r += nr;
	}
}

HX_NORM void hx_add(float *dst, const float *src, long n) {
	long i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
	for (; i < n; i++) dst[i] += src[i];
}

// hx_rope_pair rotates (*a, *b) by (c, s) as the Go kernel does.
static inline void hx_rope_pair(float *a, float *b, float c, float s) {
	float x0c = *a * c, x1s = *b * s, x0s = *a * s, x1c = *b * c;
	HX_NPIN(x0c);
	HX_NPIN(x1s);
	HX_NPIN(x0s);
	HX_NPIN(x1c);
	*a = x0c - x1s;
	*b = x0s + x1c;
}

// hx_rope_head rotates the first dims values of one head v by the pairs
// cs, eight pairs a step.
HX_NORM static void hx_rope_head(float *v, const float *cs, int dims, int neox) {
	const int half = dims / 2;
	int i = 0;
	if (neox) {
		for (; i + 8 <= half; i += 8) {
			// cos and sin of pairs i..i+7, out of (cos, sin) pairs
			const __m256 p = _mm256_loadu_ps(cs + 2 * i), q = _mm256_loadu_ps(cs + 2 * i + 8);
			const __m256 c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p, q, 0x88)), 0xD8));
			const __m256 s = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(p, q, 0xDD)), 0xD8));
			const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + i + half);
			__m256 x0c = _mm256_mul_ps(x0, c), x1s = _mm256_mul_ps(x1, s), x0s = _mm256_mul_ps(x0, s), x1c = _mm256_mul_ps(x1, c);
			HX_NPIN(x0c);
			HX_NPIN(x1s);
			HX_NPIN(x0s);
			HX_NPIN(x1c);
			_mm256_storeu_ps(v + i, _mm256_sub_ps(x0c, x1s));
			_mm256_storeu_ps(v + i + half, _mm256_add_ps(x0s, x1c));
		}
		for (; i < half; i++) hx_rope_pair(v + i, v + i + half, cs[2 * i], cs[2 * i + 1]);
		return;
	}
	for (; i + 4 <= half; i += 4) {
		// four pairs (x0, x1) and their (cos, sin): [x0·c − x1·s, x1·c + x0·s]
		const __m256 p = _mm256_loadu_ps(cs + 2 * i), x = _mm256_loadu_ps(v + 2 * i);
		__m256 xc = _mm256_mul_ps(x, _mm256_moveldup_ps(p)), xs = _mm256_mul_ps(_mm256_permute_ps(x, 0xB1), _mm256_movehdup_ps(p));
		HX_NPIN(xc);
		HX_NPIN(xs);
		_mm256_storeu_ps(v + 2 * i, _mm256_addsub_ps(xc, xs));
	}
	for (; i < half; i++) hx_rope_pair(v + 2 * i, v + 2 * i + 1, cs[2 * i], cs[2 * i + 1]);
}

HX_NORM void hx_rope(float *x, int rows, int heads, int hd, const float *cs, int dims, int neox) {
	for (int r = 0; r < rows; r++)
		for (int h = 0; h < heads; h++) hx_rope_head(x + ((long)r * heads + h) * hd, cs + (long)r * dims, dims, neox);
}
#else
int hx_norm_simd(void) { return 0; }
void hx_rmsnorm(const float *x, float *out, const float *w, int rows, int n, float eps) {
	(void)x; (void)out; (void)w; (void)rows; (void)n; (void)eps;
}
void hx_add(float *dst, const float *src, long n) { (void)dst; (void)src; (void)n; }
void hx_rope(float *x, int rows, int heads, int hd, const float *cs, int dims, int neox) {
	(void)x; (void)rows; (void)heads; (void)hd; (void)cs; (void)dims; (void)neox;
}
#endif
