#ifndef HELEXA_QUANT_KERNELS_H
#define HELEXA_QUANT_KERNELS_H
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// hx_prefetch_lines asks for the n bytes at p into L1, one prefetch a
// cache line. The prefetch is an asm statement, not _mm_prefetch: GCC 12's
// dead code elimination (-ftree-dce) deletes a loop that holds nothing but
// the builtin, which had taken hx_vnni_rows's prefetches.
static inline __attribute__((always_inline)) void hx_prefetch_lines(const void *p, size_t n) {
	for (size_t off = 0; off < n; off += 64) __asm__ volatile("prefetcht0 %0" : : "m"(*((const char *)p + off)));
}
#endif

// Weight types, by their ggml type ids (dtype.Type).
enum {
	HX_F32 = 0, HX_F16 = 1, HX_Q4_0 = 2, HX_Q4_1 = 3, HX_Q5_0 = 6, HX_Q5_1 = 7, HX_Q8_0 = 8,
	HX_Q2_K = 10, HX_Q3_K = 11, HX_Q4_K = 12, HX_Q5_K = 13, HX_Q6_K = 14, HX_BF16 = 30,
};

// hx_dot_rows sets out[r] to the dot product of the weight row at
// w + r*row_bytes (n elements of the given type) with the activations x
// (n elements of the type's activation format), for r < nrows. The caller
// checks the sizes; an unknown type gives NaNs.
void hx_dot_rows(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, int n, float *out);
// hx_simd reports whether hx_dot_rows runs the AVX2+F16C kernels.
int hx_simd(void);
// hx_dot_rows_base is hx_dot_rows with the baseline (non-SIMD) kernels.
void hx_dot_rows_base(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, int n, float *out);
// hx_dot is hx_dot_rows for one row, returning the result.
float hx_dot(int type, const uint8_t *w, const uint8_t *x, int n);
// hx_dot_rows_multi sets out[j*out_stride + r] to the dot product of weight
// row r with the activation row at x + j*x_stride, for r < nrows and
// j < nx: bit-identical to hx_dot_rows per activation row, but each weight
// block is decoded once for several activation rows.
void hx_dot_rows_multi(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride, int nx,
                       int n, float *out, size_t out_stride);
// hx_dot_rows_multi_base is hx_dot_rows_multi with the baseline kernels.
void hx_dot_rows_multi_base(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride,
                            int nx, int n, float *out, size_t out_stride);
// hx_vnni reports whether the CPU runs the AVX-512 VNNI kernels of
// kernels_vnni.c; hx_vnni_supports whether they cover a weight type.
int hx_vnni(void);
int hx_vnni_supports(int type);
// hx_vnni_rows is hx_dot_rows_multi with the AVX-512 VNNI kernels (not
// bit-identical: the float sums run in vector lanes).
void hx_vnni_rows(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride, int nx,
                  int n, float *out, size_t out_stride);
// hx_avx2 reports whether the CPU runs the AVX2+FMA kernels of
// kernels_avx2.c; hx_avx2_supports whether they cover a weight type.
int hx_avx2(void);
int hx_avx2_supports(int type);
// hx_avx2_rows is hx_dot_rows_multi with the AVX2+FMA kernels (not
// bit-identical: the float sums run in vector lanes). It returns 0, having
// done nothing, for a type or a width it does not cover.
int hx_avx2_rows(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride, int nx,
                  int n, float *out, size_t out_stride);
// hx_r16_group_bytes is the size of one packed group of 16 rows of n
// values of type (kernels_r16.c), 0 for a type that does not pack.
size_t hx_r16_group_bytes(int type, int n);
// hx_r16_pack packs ng groups of 16 rows (row_bytes apart, n values each)
// into dst (ng · hx_r16_group_bytes bytes).
void hx_r16_pack(int type, const uint8_t *w, size_t row_bytes, int ng, int n, uint8_t *dst);
// hx_r16_rows is hx_vnni_rows over ng packed groups (16 rows each); 0 when
// it could not allocate its buffers.
int hx_r16_rows(int type, const uint8_t *p, int ng, const uint8_t *x, size_t x_stride, int nx, int n, float *out,
                size_t out_stride);
// hx_quantize_q8k is quantizeQ8K in AVX-512 (byte-identical).
void hx_quantize_q8k(const float *x, int n, uint8_t *dst);
// hx_quantize_q8_0 is quantizeQ8_0Act in AVX-512 (byte-identical).
void hx_quantize_q8_0(const float *x, int n, uint8_t *dst);
// hx_quantize_q8k_avx2 and hx_quantize_q8_0_avx2 are the two in AVX2
// (byte-identical).
void hx_quantize_q8k_avx2(const float *x, int n, uint8_t *dst);
void hx_quantize_q8_0_avx2(const float *x, int n, uint8_t *dst);
#endif
