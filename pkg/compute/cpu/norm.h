#ifndef HELEXA_COMPUTE_NORM_H
#define HELEXA_COMPUTE_NORM_H
// hx_norm_simd reports whether this CPU runs the kernels below (AVX2).
int hx_norm_simd(void);
// hx_rmsnorm writes rows rows of n values of x, each scaled by
// 1/sqrt(mean of its squares + eps) and times w, to out (which may be x).
void hx_rmsnorm(const float *x, float *out, const float *w, int rows, int n, float eps);
// hx_add adds src to dst, n values.
void hx_add(float *dst, const float *src, long n);
// hx_rope rotates the first dims values of each head (heads of hd values
// a row) of rows rows of x by the (cos, sin) pairs of its row in cs (dims
// values a row): pairs (2i, 2i+1), or (i, i+dims/2) when neox.
void hx_rope(float *x, int rows, int heads, int hd, const float *cs, int dims, int neox);
#endif
