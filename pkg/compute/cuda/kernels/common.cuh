// Helpers shared by helexa's CUDA kernels: warp and block reductions, F16
// conversions and the block decoders of the quantized weight formats.
//
// The same sources are compiled by nvcc (to PTX, scripts/build-ptx.sh) and
// by g++ through pkg/compute/cuda/emu's shim (cuda_emu.h), which runs them on the
// CPU in tests. Kernels therefore use only what the shim implements: the
// thread indices, __syncthreads, the full-warp shuffles (every lane of a
// warp must call them), the F16 conversions below, __fmul_rn/__fadd_rn/
// __fsub_rn, __dp4a and the IEEE math functions (no fast-math
// intrinsics).
#pragma once

#include <cuda_fp16.h>

// HX_FULL is the mask of a whole warp: every shuffle is a full-warp one.
#define HX_FULL 0xffffffffu

// hx_warp_sum returns the sum of v over the warp, in every lane.
__device__ __forceinline__ float hx_warp_sum(float v) {
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(HX_FULL, v, o);
	return v;
}

// hx_warp_max returns the maximum of v over the warp, in every lane.
__device__ __forceinline__ float hx_warp_max(float v) {
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(HX_FULL, v, o));
	return v;
}

// hx_block_sum returns the sum of v over the block, in every thread. Every
// thread of the block must call it; blockDim.x is a multiple of 32, at most
// 1024; sh is a __shared__ float[32] of the caller, free again on return.
__device__ __forceinline__ float hx_block_sum(float v, float* sh) {
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	v = hx_warp_sum(v);
	if (lane == 0) sh[warp] = v;
	__syncthreads();
	v = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0f;
	v = hx_warp_sum(v);
	__syncthreads(); // sh may be reused
	return v;
}

// Programmatic dependent launch (sm_90 and later; pkg/compute/cuda/graphs.go): in
// a graph whose kernels are chained by programmatic edges, a kernel's
// blocks may start while the kernel before it still runs. hx_grid_wait
// makes the calling thread wait until the kernels before its own have
// finished and their writes are visible, then lets the kernel after it
// start (its blocks wait in their own hx_grid_wait). Every kernel calls it
// before it reads anything an earlier kernel wrote and before it writes
// anything; before it, a kernel may only read what no kernel writes (its
// weights, the positions and tables the host uploads before a launch) and
// ask for anything in L2 (prefetches read nothing into the kernel).
// Without a programmatic edge, on older GPUs and in the emulator it does
// nothing.
__device__ __forceinline__ void hx_grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// hx_prefetch_l2 asks for the n bytes at p in the L2 cache, lane l of a
// warp taking the 128-byte lines l, l+32, …: a kernel's weights, fetched
// before its hx_grid_wait while the kernel before it runs (sm_90 and
// later; elsewhere nothing).
__device__ __forceinline__ void hx_prefetch_l2(const void* p, size_t n, int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	const char* c = (const char*)p;
	for (size_t o = (size_t)lane * 128; o < n; o += 32 * 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(c + o));
#else
	(void)p, (void)n, (void)lane;
#endif
}

// F16 bits to F32 (exact).
__device__ __forceinline__ float hx_h2f(unsigned short h) { return __half2float(__ushort_as_half(h)); }

// F32 to F16 bits, rounding to nearest even.
__device__ __forceinline__ unsigned short hx_f2h(float f) { return __half_as_ushort(__float2half_rn(f)); }

// hx_u16 reads a little-endian 16-bit value at p (2-byte aligned).
__device__ __forceinline__ unsigned int hx_u16(const unsigned char* p) { return *(const unsigned short*)p; }

// hx_u32 reads a little-endian 32-bit value at p (4-byte aligned).
__device__ __forceinline__ unsigned int hx_u32(const unsigned char* p) {
#ifndef __CUDACC__
	if ((uintptr_t)p & 3) __trap(); // the emulator checks what a GPU would fault on
#endif
	return *(const unsigned int*)p;
}

// hx_ld2u32 reads the two 32-bit words at p (8-byte aligned) with one
// load.
__device__ __forceinline__ void hx_ld2u32(const unsigned char* p, unsigned int* a, unsigned int* b) {
#ifdef __CUDACC__
	const uint2 v = *(const uint2*)p;
	*a = v.x, *b = v.y;
#else
	if ((uintptr_t)p & 7) __trap();
	*a = ((const unsigned int*)p)[0], *b = ((const unsigned int*)p)[1];
#endif
}

// hx_ld4u32 reads the four 32-bit words at p (16-byte aligned) into u with
// one load.
__device__ __forceinline__ void hx_ld4u32(const unsigned char* p, unsigned int* u) {
#ifdef __CUDACC__
	const uint4 v = *(const uint4*)p;
	u[0] = v.x, u[1] = v.y, u[2] = v.z, u[3] = v.w;
#else
	if ((uintptr_t)p & 15) __trap();
	for (int i = 0; i < 4; i++) u[i] = ((const unsigned int*)p)[i];
#endif
}

// hx_dp4a returns c plus the dot product of the four signed bytes of a
// with those of b (one dp4a instruction on the GPU).
__device__ __forceinline__ int hx_dp4a(unsigned int a, unsigned int b, int c) {
	return __dp4a((int)a, (int)b, c);
}

// Q8_K activation records (hx_round_q8k, the rounding norms): 256 values
// as signed bytes q, the float scale d at byte 256 (the values are q·d),
// padded to HX_Q8K_REC bytes so that every record starts 16-byte aligned;
// a row of cols values is cols/256 records, rows one after another.
#define HX_Q8K_REC 272

// hx_q8k_rs is the bytes of one row of Q8_K records.
__device__ __forceinline__ size_t hx_q8k_rs(int cols) { return (size_t)(cols / 256) * HX_Q8K_REC; }

// hx_half reads the F16 value at p (2-byte aligned) as F32.
__device__ __forceinline__ float hx_half(const unsigned char* p) { return hx_h2f(*(const unsigned short*)p); }

// Block decoders. Each quantized format is a struct with its block size BS
// (elements), its byte size TS and lane(blk, l, v), which writes into v[i]
// (i < BS/32) the value of element 32*i + l of the block at blk, computed
// with the same F32 operations, in the same order, as pkg/compute/quant's
// dequantization (products with __fmul_rn so that nvcc does not contract
// them into FMAs): the decoded values equal the CPU's bit for bit. Blocks
// are 2-byte aligned (every block size is even).

// Q8_0: { half d; int8 qs[32]; }, value qs[l]·d.
struct hx_q8_0 {
	static constexpr int BS = 32, TS = 34;
	__device__ __forceinline__ static void lane(const unsigned char* blk, int l, float* v) {
		const float d = hx_half(blk);
		v[0] = __fmul_rn((float)(signed char)blk[2 + l], d);
	}
};

// Q4_0: { half d; u8 qs[16]; }: element l < 16 is the low nibble of qs[l],
// element l+16 the high nibble; value (q-8)·d.
struct hx_q4_0 {
	static constexpr int BS = 32, TS = 18;
	__device__ __forceinline__ static void lane(const unsigned char* blk, int l, float* v) {
		const float d = hx_half(blk);
		const int q = (blk[2 + (l & 15)] >> (l & 16 ? 4 : 0)) & 15;
		v[0] = __fmul_rn((float)(q - 8), d);
	}
};

// hx_scale_min_k4w is ggml's get_scale_min_k4: the 6-bit scale and min of
// sub-block j (0..7) of a Q4_K/Q5_K block from its 12 packed scale bytes,
// given as three little-endian words s0, s1, s2; without a branch on j
// (the lanes of one warp may take different sub-blocks).
__device__ __forceinline__ void hx_scale_min_k4w(int j, unsigned int s0, unsigned int s1, unsigned int s2, int* sc,
                                                 int* m) {
	const int sh = 8 * (j & 3);
	const int b0 = (s0 >> sh) & 0xFF, b1 = (s1 >> sh) & 0xFF, b2 = (s2 >> sh) & 0xFF;
	*sc = j < 4 ? b0 & 63 : (b2 & 15) | (b0 >> 6) << 4;
	*m = j < 4 ? b1 & 63 : (b2 >> 4) | (b1 >> 6) << 4;
}

// hx_scale_min_k4 is hx_scale_min_k4w of the 12 scale bytes at q
// (4-byte aligned: a block's byte 4).
__device__ __forceinline__ void hx_scale_min_k4(int j, const unsigned char* q, int* sc, int* m) {
	hx_scale_min_k4w(j, hx_u32(q), hx_u32(q + 4), hx_u32(q + 8), sc, m);
}

// Q4_K: { half d; half dmin; u8 scales[12]; u8 qs[128]; }: element
// 64j + l (l < 32) is the low nibble of qs[32j + l] in sub-block 2j,
// element 64j + 32 + l its high nibble in sub-block 2j+1; value
// (d·sc)·q − dmin·m of the sub-block.
struct hx_q4_k {
	static constexpr int BS = 256, TS = 144;
	__device__ __forceinline__ static void lane(const unsigned char* blk, int l, float* v) {
		const float d = hx_half(blk), dmin = hx_half(blk + 2);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = blk[16 + 32 * j + l];
			int s1, m1, s2, m2;
			hx_scale_min_k4(2 * j, blk + 4, &s1, &m1);
			hx_scale_min_k4(2 * j + 1, blk + 4, &s2, &m2);
			v[2 * j] = __fsub_rn(__fmul_rn(__fmul_rn(d, (float)s1), (float)(q & 15)), __fmul_rn(dmin, (float)m1));
			v[2 * j + 1] = __fsub_rn(__fmul_rn(__fmul_rn(d, (float)s2), (float)(q >> 4)), __fmul_rn(dmin, (float)m2));
		}
	}
};

// Q5_K: { half d; half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }: as
// Q4_K with a fifth bit: bit 2j of qh[l] for element 64j + l, bit 2j+1 for
// element 64j + 32 + l.
struct hx_q5_k {
	static constexpr int BS = 256, TS = 176;
	__device__ __forceinline__ static void lane(const unsigned char* blk, int l, float* v) {
		const float d = hx_half(blk), dmin = hx_half(blk + 2);
		const int h = blk[16 + l];
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int q = blk[48 + 32 * j + l];
			const int lo = (q & 15) | (((h >> (2 * j)) & 1) << 4);
			const int hi = (q >> 4) | (((h >> (2 * j + 1)) & 1) << 4);
			int s1, m1, s2, m2;
			hx_scale_min_k4(2 * j, blk + 4, &s1, &m1);
			hx_scale_min_k4(2 * j + 1, blk + 4, &s2, &m2);
			v[2 * j] = __fsub_rn(__fmul_rn(__fmul_rn(d, (float)s1), (float)lo), __fmul_rn(dmin, (float)m1));
			v[2 * j + 1] = __fsub_rn(__fmul_rn(__fmul_rn(d, (float)s2), (float)hi), __fmul_rn(dmin, (float)m2));
		}
	}
};

// Q6_K: { u8 ql[128]; u8 qh[64]; int8 scales[16]; half d; }: element
// 128h + 32g + l (h < 2, g < 4, l < 32) has its low 4 bits in ql[64h + l +
// 32(g&1)] (the high nibble when g >= 2) and its high 2 bits at bit 2g of
// qh[32h + l]; value (d·scales[e/16])·(q − 32).
struct hx_q6_k {
	static constexpr int BS = 256, TS = 210;
	__device__ __forceinline__ static void lane(const unsigned char* blk, int l, float* v) {
		const float d = hx_half(blk + 208);
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int qh = blk[128 + 32 * h + l];
			const int ql0 = blk[64 * h + l], ql1 = blk[64 * h + 32 + l];
#pragma unroll
			for (int g = 0; g < 4; g++) {
				const int ql = (g & 1 ? ql1 : ql0) >> (g >= 2 ? 4 : 0);
				const int q = ((ql & 15) | (((qh >> (2 * g)) & 3) << 4)) - 32;
				const int e = 128 * h + 32 * g + l;
				const float ds = __fmul_rn(d, (float)(signed char)blk[192 + e / 16]);
				v[4 * h + g] = __fmul_rn(ds, (float)q);
			}
		}
	}
};
