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

// HX_NORM_PER is the most elements of a row each thread keeps in
// registers (hx_norm_row), HX_NORM_ROW the widest row the rounding norms
// keep in shared memory for their rounding pass: HX_NORM_PER times the
// block of 256.
#define HX_NORM_PER 16
#define HX_NORM_ROW 4096

// hx_norm_regs is hx_norm_row for rows of at most PER·blockDim.x values:
// the row is loaded once, with its weights, into registers, so that one
// memory latency precedes the reduction and none follows it.
template <int PER>
__device__ __forceinline__ void hx_norm_regs(float* orow, float* xr, const float* __restrict__ yr,
                                             const float* __restrict__ w, int cols, float eps, float* row,
                                             float* red) {
	float v[PER], wv[PER];
#pragma unroll
	for (int k = 0; k < PER; k++) {
		const int i = threadIdx.x + k * blockDim.x;
		v[k] = wv[k] = 0.0f;
		if (i < cols) {
			v[k] = yr != nullptr ? xr[i] + yr[i] : xr[i];
			wv[k] = w[i];
		}
	}
	float sum = 0.0f;
#pragma unroll
	for (int k = 0; k < PER; k++) {
		const int i = threadIdx.x + k * blockDim.x;
		if (i < cols) {
			if (yr != nullptr) xr[i] = v[k];
			sum += v[k] * v[k];
		}
	}
	sum = hx_block_sum(sum, red);
	const float mean = sum / (float)cols;
	const float scale = 1.0f / sqrtf(mean + eps);
#pragma unroll
	for (int k = 0; k < PER; k++) {
		const int i = threadIdx.x + k * blockDim.x;
		if (i < cols) {
			const float o = __fmul_rn(v[k], scale) * wv[k];
			orow[i] = o;
			if (row != nullptr) row[i] = o;
		}
	}
}

// hx_norm_row is hx_add (xr += yr; none when yr is null) then
// hx_rmsnorm_row of xr into orow, for one row: each thread adds the
// elements it then reads, so the sums are hx_rmsnorm's. A row of at most
// HX_NORM_PER·blockDim.x values goes through registers (hx_norm_regs),
// and its normalised values also to row when it is set (shared memory,
// cols ≤ HX_NORM_ROW); wider rows go through global memory (row unused).
// red is 32 floats.
__device__ __forceinline__ void hx_norm_row(float* orow, float* xr, const float* __restrict__ yr,
                                            const float* __restrict__ w, int cols, float eps, float* row, float* red) {
	const int bd = blockDim.x;
	if (cols <= bd) {
		hx_norm_regs<1>(orow, xr, yr, w, cols, eps, row, red);
	} else if (cols <= 4 * bd) {
		hx_norm_regs<4>(orow, xr, yr, w, cols, eps, row, red);
	} else if (cols <= HX_NORM_PER * bd) {
		hx_norm_regs<HX_NORM_PER>(orow, xr, yr, w, cols, eps, row, red);
	} else {
		if (yr != nullptr) {
			for (int i = threadIdx.x; i < cols; i += bd) xr[i] = xr[i] + yr[i];
		}
		hx_rmsnorm_row(orow, xr, w, cols, eps, red);
	}
}

// RMS normalisation of row blockIdx.x of x (cols wide): out[i] =
// (x[i]·scale)·w[i] with scale = 1/sqrt(mean(x²) + eps) (as the CPU: the
// scale in F32 from the mean, the sum here in F32 over a block reduction).
// out may be x. Grid (rows), block 256 (any multiple of 32 works).
extern "C" __global__ void hx_rmsnorm(float* out, const float* x, const float* __restrict__ w, int cols, float eps) {
	hx_grid_wait();
	__shared__ float red[32];
	const size_t r = (size_t)blockIdx.x * cols;
	hx_norm_row(out + r, (float*)x + r, nullptr, w, cols, eps, nullptr, red);
}

// hx_add_rmsnorm is hx_add (x += y) then hx_rmsnorm of x into out, for row
// blockIdx.x (hx_norm_row). Grid (rows), block 256.
extern "C" __global__ void hx_add_rmsnorm(float* out, float* x, const float* __restrict__ y,
                                          const float* __restrict__ w, int cols, float eps) {
	hx_grid_wait();
	__shared__ float red[32];
	const size_t r = (size_t)blockIdx.x * cols;
	hx_norm_row(out + r, x + r, y + r, w, cols, eps, nullptr, red);
}

// hx_rmsnorm2 is hx_rmsnorm over two tensors of one row width in one
// launch: rows [0, rows1) of x1, then the rows of x2. Grid (rows1 +
// rows2), block 256.
extern "C" __global__ void hx_rmsnorm2(float* out1, const float* x1, const float* __restrict__ w1, int rows1,
                                       float* out2, const float* x2, const float* __restrict__ w2, int cols,
                                       float eps) {
	hx_grid_wait();
	__shared__ float sh[32];
	const int r = blockIdx.x;
	if (r < rows1) {
		hx_norm_row(out1 + (size_t)r * cols, (float*)x1 + (size_t)r * cols, nullptr, w1, cols, eps, nullptr, sh);
	} else {
		const int r2 = r - rows1;
		hx_norm_row(out2 + (size_t)r2 * cols, (float*)x2 + (size_t)r2 * cols, nullptr, w2, cols, eps, nullptr, sh);
	}
}

// hx_argmax_warp leaves in every lane the warp's best (v, i): the largest
// value, the lowest index on ties; index -1 is no value.
__device__ __forceinline__ void hx_argmax_warp(float* v, int* i) {
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		const float ov = __shfl_xor_sync(HX_FULL, *v, o);
		const int oi = __shfl_xor_sync(HX_FULL, *i, o);
		if (oi >= 0 && (*i < 0 || ov > *v || (ov == *v && oi < *i))) {
			*v = ov;
			*i = oi;
		}
	}
}

// hx_argmax_key is the key of value v at index i in hx_argmax_rows: keys
// order as their values do (−0 as +0), the lower index first among equal
// values, and every key of a finite value is above 0 (no value).
__device__ __forceinline__ unsigned long long hx_argmax_key(float v, int i) {
	if (v == 0.0f) v = 0.0f; // −0 ties with +0, as a float comparison has it
	const unsigned int b = __float_as_uint(v);
	const unsigned int o = (b & 0x80000000u) ? ~b : b | 0x80000000u;
	return ((unsigned long long)o << 32) | (0xffffffffu - (unsigned int)i);
}

// HX_AM_LOADS is the values a thread of hx_argmax_rows loads at once.
#define HX_AM_LOADS 8

// hx_argmax_rows leaves in keys[b], for each listed row rows[b] of x (cols
// wide), the largest hx_argmax_key of the row's finite values (NaN, +Inf
// and -Inf never win), or leaves it 0 when the row has none: the index of
// the largest value, the lowest on ties, is 0xffffffff minus the key's
// low 32 bits (greedy sampling on the device, as the host sampler's
// maxFinite picks). keys holds zeros before the launch. Block (b, s) of
// grid (len(rows), S) takes the s-th of S equal slices of the row: thread
// t scans slice positions t, t+blockDim, … (HX_AM_LOADS loads in flight),
// the warps and then the block reduce, and one atomicMax per block merges
// the slices.
extern "C" __global__ void hx_argmax_rows(unsigned long long* keys, const float* __restrict__ x,
                                          const int* __restrict__ rows, int cols) {
	hx_grid_wait();
	__shared__ float sv[32];
	__shared__ int si[32];
	const int per = (cols + (int)gridDim.y - 1) / (int)gridDim.y;
	const int lo = (int)blockIdx.y * per, hi = min(cols, lo + per);
	const float* xr = x + (size_t)rows[blockIdx.x] * cols;
	const int bd = blockDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	float best = -INFINITY;
	int bi = -1;
	for (int i0 = lo + threadIdx.x; i0 < hi; i0 += HX_AM_LOADS * bd) {
		float v[HX_AM_LOADS];
#pragma unroll
		for (int k = 0; k < HX_AM_LOADS; k++) v[k] = i0 + k * bd < hi ? xr[i0 + k * bd] : -INFINITY;
#pragma unroll
		for (int k = 0; k < HX_AM_LOADS; k++) { // increasing index within the thread: the first wins ties
			if (v[k] > best && v[k] < INFINITY) {
				best = v[k];
				bi = i0 + k * bd;
			}
		}
	}
	hx_argmax_warp(&best, &bi);
	if (lane == 0) {
		sv[warp] = best;
		si[warp] = bi;
	}
	__syncthreads();
	if (warp != 0) return;
	best = lane < (bd >> 5) ? sv[lane] : -INFINITY;
	bi = lane < (bd >> 5) ? si[lane] : -1;
	hx_argmax_warp(&best, &bi);
	if (lane == 0 && bi >= 0) atomicMax(keys + blockIdx.x, hx_argmax_key(best, bi));
}

// Activation rounding: x rounded the way the CPU quantizes activations for
// a quantized weight (pkg/compute/quant.QuantizeActivations), returned as
// F32 values q·d, so that a float product with the dequantized weight is
// the CPU's integer dot product up to summation order; the Q8_K roundings
// also write the bytes q and scales d as records (HX_Q8K_REC), which the
// K-quant matvecs multiply as the CPU does.

// hx_round_q8k_block rounds the 256 values at xb into ob as
// quantize_row_q8_K_ref: max the signed value of largest magnitude (the
// first on ties), iscale = -127/max, q = min(127, nearest(iscale·x)), d =
// 1/iscale; the record at qb gets q and d. Called by a whole warp, lane l
// taking values l + 32i.
__device__ __forceinline__ void hx_round_q8k_block(float* __restrict__ ob, unsigned char* __restrict__ qb,
                                                   const float* __restrict__ xb, int lane) {
	float v[8];
	float a = -1.0f;
	int ai = 0;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		v[i] = xb[lane + 32 * i];
		const float av = fabsf(v[i]);
		if (av > a) { // increasing index within the lane: the first wins ties
			a = av;
			ai = lane + 32 * i;
		}
	}
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		const float oa = __shfl_xor_sync(HX_FULL, a, o);
		const int oi = __shfl_xor_sync(HX_FULL, ai, o);
		if (oa > a || (oa == a && oi < ai)) {
			a = oa;
			ai = oi;
		}
	}
	signed char* q8 = (signed char*)qb;
	if (a == 0.0f) {
#pragma unroll
		for (int i = 0; i < 8; i++) ob[lane + 32 * i] = 0.0f, q8[lane + 32 * i] = 0;
		if (lane == 0) *(float*)(qb + 256) = 0.0f;
		return;
	}
	const float iscale = __fdiv_rn(-127.0f, xb[ai]);
	const float d = __fdiv_rn(1.0f, iscale);
#pragma unroll
	for (int i = 0; i < 8; i++) {
		const int q = min(127, __float2int_rn(__fmul_rn(iscale, v[i])));
		ob[lane + 32 * i] = __fmul_rn((float)q, d);
		q8[lane + 32 * i] = (signed char)q;
	}
	if (lane == 0) *(float*)(qb + 256) = d;
}

// hx_round_q8k rounds 256-value blocks (hx_round_q8k_block) into out and
// the records q (n/256 of them), one warp per block. Grid ceil(n/1024),
// block 128.
extern "C" __global__ void hx_round_q8k(float* __restrict__ out, unsigned char* __restrict__ q,
                                        const float* __restrict__ x, int n) {
	hx_grid_wait();
	const int blk = blockIdx.x * 4 + (threadIdx.x >> 5);
	if (blk * 256 >= n) return;
	hx_round_q8k_block(out + (size_t)blk * 256, q + (size_t)blk * HX_Q8K_REC, x + (size_t)blk * 256, threadIdx.x & 31);
}

// hx_norm_round rounds a normalised row as hx_round_q8k would (into outr
// and the row's records outq), one warp per 256 values (cols a multiple of
// 256): from row when the norm left the values there (sh), else from orow.
__device__ __forceinline__ void hx_norm_round(float* outr, unsigned char* outq, const float* orow, const float* row,
                                              bool sh, int cols) {
	__syncthreads(); // the row's normalised values, written by every thread
	const float* src = sh ? row : orow;
	const int nw = blockDim.x >> 5;
	for (int b = threadIdx.x >> 5; b < cols / 256; b += nw) {
		hx_round_q8k_block(outr + (size_t)b * 256, outq + (size_t)b * HX_Q8K_REC, src + (size_t)b * 256,
		                   threadIdx.x & 31);
	}
}

// hx_add_rmsnorm_q8k is hx_add_rmsnorm that also writes out rounded as
// hx_round_q8k would into outr and outq (cols a multiple of 256): the
// input of the products that follow the norm, rounded in the same launch.
// Grid (rows), block 256.
extern "C" __global__ void hx_add_rmsnorm_q8k(float* out, float* outr, unsigned char* outq, float* x,
                                              const float* __restrict__ y, const float* __restrict__ w, int cols,
                                              float eps) {
	hx_grid_wait();
	__shared__ float red[32];
	__shared__ float row[HX_NORM_ROW];
	const size_t r = (size_t)blockIdx.x * cols;
	const bool sh = cols <= HX_NORM_ROW && cols <= HX_NORM_PER * (int)blockDim.x;
	hx_norm_row(out + r, x + r, y + r, w, cols, eps, sh ? row : nullptr, red);
	hx_norm_round(outr + r, outq + blockIdx.x * hx_q8k_rs(cols), out + r, row, sh, cols);
}

// hx_rmsnorm_q8k is hx_rmsnorm that also writes out rounded as
// hx_round_q8k would into outr and outq (cols a multiple of 256). Grid
// (rows), block 256.
extern "C" __global__ void hx_rmsnorm_q8k(float* out, float* outr, unsigned char* outq, const float* x,
                                          const float* __restrict__ w, int cols, float eps) {
	hx_grid_wait();
	__shared__ float red[32];
	__shared__ float row[HX_NORM_ROW];
	const size_t r = (size_t)blockIdx.x * cols;
	const bool sh = cols <= HX_NORM_ROW && cols <= HX_NORM_PER * (int)blockDim.x;
	hx_norm_row(out + r, (float*)x + r, nullptr, w, cols, eps, sh ? row : nullptr, red);
	hx_norm_round(outr + r, outq + blockIdx.x * hx_q8k_rs(cols), out + r, row, sh, cols);
}

// hx_round_q8_0 rounds 32-value blocks as ggml-cpu's x86 quantize_row_q8_0
// (and q8_1): d = max|x|/127 stored as F16, q = round-to-even(x·127/max|x|)
// clamped to [-128, 127]; the value is q·d with d read back from F16. One
// warp per block. Grid ceil(n/128), block 128.
extern "C" __global__ void hx_round_q8_0(float* __restrict__ out, const float* __restrict__ x, int n) {
	hx_grid_wait();
	const int lane = threadIdx.x & 31;
	const int blk = blockIdx.x * 4 + (threadIdx.x >> 5);
	if (blk * 32 >= n) return;
	const size_t i = (size_t)blk * 32 + lane;
	const float v = x[i];
	const float amax = hx_warp_max(fabsf(v));
	const float d = hx_h2f(hx_f2h(__fdiv_rn(amax, 127.0f)));
	const float id = amax != 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
	const int q = max(-128, min(127, __float2int_rn(__fmul_rn(v, id))));
	out[i] = __fmul_rn((float)q, d);
}
