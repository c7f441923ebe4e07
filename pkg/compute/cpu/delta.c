//go:build cgo && !purego

// The gated delta rule, one state row at a time: row j of a head's state
// only ever depends on its own past, so it is loaded once, carried through
// every token of the span in vector registers and stored once. The dot
// products sum in vector lanes, so results differ from the Go kernel (the
// oracle) by rounding only.

#include "delta.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_DELTA __attribute__((target("avx512f,fma")))

int hx_delta_simd(void) { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"); }

// hx_delta_row16 is hx_delta_rows for one row of a head with dim/16 = nv
// vectors (at most 16).
HX_DELTA static void hx_delta_row(float *row, int nv, int j, int n, const float *q, const float *k, const float *v,
                                  long stride, const float *decay, const float *beta, float *out, long ostride, float scale) {
	__m512 r[16];
	for (int c = 0; c < nv; c++) r[c] = _mm512_loadu_ps(row + 16 * c);
	for (int t = 0; t < n; t++) {
		const float *kt = k + t * stride, *qt = q + t * stride;
		__m512 dec = _mm512_set1_ps(decay[t]), sk = _mm512_setzero_ps();
		for (int c = 0; c < nv; c++) {
			r[c] = _mm512_mul_ps(r[c], dec);
			sk = _mm512_fmadd_ps(r[c], _mm512_loadu_ps(kt + 16 * c), sk);
		}
		__m512 d = _mm512_set1_ps((v[t * stride + j] - _mm512_reduce_add_ps(sk)) * beta[t]), o = _mm512_setzero_ps();
		for (int c = 0; c < nv; c++) {
			r[c] = _mm512_fmadd_ps(d, _mm512_loadu_ps(kt + 16 * c), r[c]);
			o = _mm512_fmadd_ps(r[c], _mm512_loadu_ps(qt + 16 * c), o);
		}
		out[t * ostride + j] = _mm512_reduce_add_ps(o) * scale;
	}
	for (int c = 0; c < nv; c++) _mm512_storeu_ps(row + 16 * c, r[c]);
}

HX_DELTA void hx_delta_rows(float *s, int dim, int j0, int j1, int n, const float *q, const float *k, const float *v,
                            long stride, const float *decay, const float *beta, float *out, long ostride, float scale) {
	for (int j = j0; j < j1; j++) hx_delta_row(s + (long)j * dim, dim / 16, j, n, q, k, v, stride, decay, beta, out, ostride, scale);
}
#else
int hx_delta_simd(void) { return 0; }
void hx_delta_rows(float *s, int dim, int j0, int j1, int n, const float *q, const float *k, const float *v,
                   long stride, const float *decay, const float *beta, float *out, long ostride, float scale) {
	(void)s; (void)dim; (void)j0; (void)j1; (void)n; (void)q; (void)k; (void)v; (void)stride; (void)decay; (void)beta;
	(void)out; (void)ostride; (void)scale;
}
#endif
