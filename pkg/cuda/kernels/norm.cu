// Row reductions.
#include "common.cuh"

// RMS normalisation of row blockIdx.x of x (cols wide): out[i] =
// (x[i]·scale)·w[i] with scale = 1/sqrt(mean(x²) + eps) (as the CPU: the
// scale in F32 from the mean, the sum here in F32 over a block reduction).
// out may be x. Grid (rows), block 256 (any multiple of 32 works).
extern "C" __global__ void hx_rmsnorm(float* out, const float* x, const float* __restrict__ w, int cols, float eps) {
	__shared__ float sh[32];
	const float* xr = x + (size_t)blockIdx.x * cols;
	float* orow = out + (size_t)blockIdx.x * cols;
	float sum = 0.0f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		const float v = xr[i];
		sum += v * v;
	}
	sum = hx_block_sum(sum, sh);
	const float mean = sum / (float)cols;
	const float scale = 1.0f / sqrtf(mean + eps);
	for (int i = threadIdx.x; i < cols; i += blockDim.x) orow[i] = __fmul_rn(xr[i], scale) * w[i];
}
