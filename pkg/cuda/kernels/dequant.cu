// Dequantization of weight rows to F16 (prefill: the host then multiplies
// with cuBLAS). Grid (rows), block 256: out[r·cols + i] is the F16 (nearest
// even) of element i of row r. Warp w of the block takes blocks w, w+8, …
// of the row; lane l decodes elements 32i + l of a block (the decoders of
// common.cuh, bit for bit the CPU's values before the F16 rounding).
#include "common.cuh"

template <class T>
__device__ __forceinline__ void hx_dq(unsigned short* __restrict__ out, const unsigned char* __restrict__ w, int rows,
                                      int cols) {
	constexpr int PL = T::BS / 32;
	const int r = blockIdx.x;
	if (r >= rows) return;
	const int nb = cols / T::BS;
	const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
	const unsigned char* wr = w + (size_t)r * nb * T::TS;
	unsigned short* orow = out + (size_t)r * cols;
	for (int b = threadIdx.x >> 5; b < nb; b += warps) {
		float v[PL];
		T::lane(wr + (size_t)b * T::TS, lane, v);
#pragma unroll
		for (int i = 0; i < PL; i++) orow[(size_t)b * T::BS + 32 * i + lane] = hx_f2h(v[i]);
	}
}

#define HX_DQ_KERNEL(name, T)                                                                              \
	extern "C" __global__ void name(unsigned short* out, const unsigned char* w, int rows, int cols) { \
		hx_dq<T>(out, w, rows, cols);                                                                  \
	}

HX_DQ_KERNEL(hx_dq_q8_0, hx_q8_0)
HX_DQ_KERNEL(hx_dq_q4_0, hx_q4_0)
HX_DQ_KERNEL(hx_dq_q4_k, hx_q4_k)
HX_DQ_KERNEL(hx_dq_q5_k, hx_q5_k)
HX_DQ_KERNEL(hx_dq_q6_k, hx_q6_k)
