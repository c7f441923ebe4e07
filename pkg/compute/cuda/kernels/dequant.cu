// Dequantization of weight rows to F32 (prefill: the host then multiplies
// with cuBLAS, exactly). Grid (rows), block 256: out[r·cols + i] is element
// i of row r. Warp w of the block takes blocks w, w+8, … of the row; lane l
// decodes elements 32i + l of a block (the decoders of common.cuh, bit for
// bit the CPU's values).
#include "common.cuh"

// hx_decode_row writes the cols values of the weight row at wr to orow,
// the block's warps sharing its blocks (the body of hx_dq and hx_rows).
template <class T>
__device__ __forceinline__ void hx_decode_row(float* __restrict__ orow, const unsigned char* __restrict__ wr, int cols) {
	constexpr int PL = T::BS / 32;
	const int nb = cols / T::BS;
	const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
	for (int b = threadIdx.x >> 5; b < nb; b += warps) {
		float v[PL];
		T::lane(wr + (size_t)b * T::TS, lane, v);
#pragma unroll
		for (int i = 0; i < PL; i++) orow[(size_t)b * T::BS + 32 * i + lane] = v[i];
	}
}

template <class T>
__device__ __forceinline__ void hx_dq(float* __restrict__ out, const unsigned char* __restrict__ w, int rows, int cols) {
	const int r = blockIdx.x;
	if (r >= rows) return;
	hx_decode_row<T>(out + (size_t)r * cols, w + (size_t)r * (cols / T::BS) * T::TS, cols);
}

#define HX_DQ_KERNEL(name, T)                                                                \
	extern "C" __global__ void name(float* out, const unsigned char* w, int rows, int cols) { \
		hx_grid_wait();                                                                      \
		hx_dq<T>(out, w, rows, cols);                                                        \
	}

HX_DQ_KERNEL(hx_dq32_q8_0, hx_q8_0)
HX_DQ_KERNEL(hx_dq32_q4_0, hx_q4_0)
HX_DQ_KERNEL(hx_dq32_q4_k, hx_q4_k)
HX_DQ_KERNEL(hx_dq32_q5_k, hx_q5_k)
HX_DQ_KERNEL(hx_dq32_q6_k, hx_q6_k)

// Embedding lookup: out row i (F32, cols values) is row ids[i] of the
// weight, decoded exactly as the CPU decodes it. Grid (n), block 256; ids
// are checked on the host.
template <class T>
__device__ __forceinline__ void hx_rows(float* __restrict__ out, const unsigned char* __restrict__ w,
                                        const int* __restrict__ ids, int n, int cols) {
	const int i = blockIdx.x;
	if (i >= n) return;
	hx_decode_row<T>(out + (size_t)i * cols, w + (size_t)ids[i] * (cols / T::BS) * T::TS, cols);
}

#define HX_ROWS_KERNEL(name, T)                                                                                   \
	extern "C" __global__ void name(float* out, const unsigned char* w, const int* ids, int n, int cols) { \
		hx_grid_wait();                                                                                       \
		hx_rows<T>(out, w, ids, n, cols);                                                                     \
	}

HX_ROWS_KERNEL(hx_rows_q8_0, hx_q8_0)
HX_ROWS_KERNEL(hx_rows_q4_0, hx_q4_0)
HX_ROWS_KERNEL(hx_rows_q4_k, hx_q4_k)
HX_ROWS_KERNEL(hx_rows_q5_k, hx_q5_k)
HX_ROWS_KERNEL(hx_rows_q6_k, hx_q6_k)

// hx_rows_f32 and hx_rows_f16 are the lookup in F32 and F16 tables (any
// cols).
extern "C" __global__ void hx_rows_f32(float* out, const float* w, const int* ids, int n, int cols) {
	hx_grid_wait();
	const int i = blockIdx.x;
	if (i >= n) return;
	for (int j = threadIdx.x; j < cols; j += blockDim.x) out[(size_t)i * cols + j] = w[(size_t)ids[i] * cols + j];
}

extern "C" __global__ void hx_rows_f16(float* out, const unsigned short* w, const int* ids, int n, int cols) {
	hx_grid_wait();
	const int i = blockIdx.x;
	if (i >= n) return;
	for (int j = threadIdx.x; j < cols; j += blockDim.x) out[(size_t)i * cols + j] = hx_h2f(w[(size_t)ids[i] * cols + j]);
}
