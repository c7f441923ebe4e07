#ifndef HELEXA_COMPUTE_DELTA_H
#define HELEXA_COMPUTE_DELTA_H

// hx_delta_simd reports whether hx_delta_rows can run on this CPU
// (AVX-512F and FMA).
int hx_delta_simd(void);
// hx_delta_rows advances rows [j0, j1) of one head's delta-rule state s
// (dim × dim, row j holds S[j][·]; dim a multiple of 16) over n tokens,
// keeping each row in registers across the tokens: token t reads q, k at
// q + t*stride, k + t*stride (dim values), v[t*stride + j], decay[t] and
// beta[t], and writes out[t*ostride + j].
void hx_delta_rows(float *s, int dim, int j0, int j1, int n, const float *q, const float *k, const float *v,
                   long stride, const float *decay, const float *beta, float *out, long ostride, float scale);
#endif
