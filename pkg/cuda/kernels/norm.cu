// Row reductions.
#include "common.cuh"

// hx_rmsnorm_row is hx_rmsnorm's body for one row (sh: 32 floats of
// shared memory).
__device__ __forceinline__ void hx_rmsnorm_row(float* orow, const float* xr, const float* __restrict__ w, int cols,
                                               float eps, float* sh) {
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

// RMS normalisation of row blockIdx.x of x (cols wide): out[i] =
// (x[i]·scale)·w[i] with scale = 1/sqrt(mean(x²) + eps) (as the CPU: the
// scale in F32 from the mean, the sum here in F32 over a block reduction).
// out may be x. Grid (rows), block 256 (any multiple of 32 works).
extern "C" __global__ void hx_rmsnorm(float* out, const float* x, const float* __restrict__ w, int cols, float eps) {
	__shared__ float sh[32];
	hx_rmsnorm_row(out + (size_t)blockIdx.x * cols, x + (size_t)blockIdx.x * cols, w, cols, eps, sh);
}

// hx_add_rmsnorm is hx_add (x += y) then hx_rmsnorm of x into out, for row
// blockIdx.x: each thread adds the elements it then reads, so the sums
// are hx_rmsnorm's. Grid (rows), block 256.
extern "C" __global__ void hx_add_rmsnorm(float* out, float* x, const float* __restrict__ y,
                                          const float* __restrict__ w, int cols, float eps) {
	__shared__ float sh[32];
	float* xr = x + (size_t)blockIdx.x * cols;
	const float* yr = y + (size_t)blockIdx.x * cols;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) xr[i] = xr[i] + yr[i];
	hx_rmsnorm_row(out + (size_t)blockIdx.x * cols, xr, w, cols, eps, sh);
}

// hx_rmsnorm2 is hx_rmsnorm over two tensors of one row width in one
// launch: rows [0, rows1) of x1, then the rows of x2. Grid (rows1 +
// rows2), block 256.
extern "C" __global__ void hx_rmsnorm2(float* out1, const float* x1, const float* __restrict__ w1, int rows1,
                                       float* out2, const float* x2, const float* __restrict__ w2, int cols,
                                       float eps) {
	__shared__ float sh[32];
	const int r = blockIdx.x;
	if (r < rows1) {
		hx_rmsnorm_row(out1 + (size_t)r * cols, x1 + (size_t)r * cols, w1, cols, eps, sh);
	} else {
		const int r2 = r - rows1;
		hx_rmsnorm_row(out2 + (size_t)r2 * cols, x2 + (size_t)r2 * cols, w2, cols, eps, sh);
	}
}

// hx_argmax_rows writes, for each listed row rows[b] of x (cols wide), the
// index of its largest finite value (the lowest index on ties; NaN, +Inf
// and -Inf never win), or -1 when it has none: greedy sampling on the
// device, as the host sampler's maxFinite picks. Grid (len(rows)), block
// 256.
extern "C" __global__ void hx_argmax_rows(int* out, const float* __restrict__ x, const int* __restrict__ rows,
                                          int cols) {
	__shared__ float sv[256];
	__shared__ int si[256];
	const float* xr = x + (size_t)rows[blockIdx.x] * cols;
	float best = -INFINITY;
	int bi = -1;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		const float v = xr[i];
		if (v > best && v < INFINITY) {
			best = v;
			bi = i;
		}
	}
	sv[threadIdx.x] = best;
	si[threadIdx.x] = bi;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if ((int)threadIdx.x < s) {
			const float ov = sv[threadIdx.x + s];
			const int oi = si[threadIdx.x + s];
			if (oi >= 0 && (si[threadIdx.x] < 0 || ov > sv[threadIdx.x] || (ov == sv[threadIdx.x] && oi < si[threadIdx.x]))) {
				sv[threadIdx.x] = ov;
				si[threadIdx.x] = oi;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) out[blockIdx.x] = si[0];
}
