// cuda_emu.h is the shim that lets g++ compile helexa's CUDA kernels
// (pkg/compute/cuda/kernels/*.cu) unchanged, to run them on the CPU in tests. It
// defines the CUDA qualifiers away (__shared__ becomes static: the blocks
// of a launch run one after another, so a static local is exactly one
// block's shared memory), the thread indices as globals that the scheduler
// sets as it switches between the threads of a block, and the device
// functions the kernels use: __syncthreads, the full-warp shuffles, __trap,
// the F16 conversions (in software, rounding to nearest even) and the
// rounding intrinsics. Everything else (expf, tanhf, sincosf, pow, …) is
// the C library's.
//
// The threads of a block are fibers (ucontext) run cooperatively on the
// calling thread: a thread runs until it reaches a barrier (__syncthreads,
// or a shuffle, which is a barrier of its warp) or returns; see emu.cc.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct uint3 {
	unsigned int x, y, z;
};
struct dim3 {
	unsigned int x, y, z;
};

// The running thread's indices and the launch's shape.
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
constexpr int warpSize = 32;

namespace hxemu {
// syncthreads waits until every thread of the block reaches a
// __syncthreads (a thread that has returned makes it an error).
void syncthreads();
// shuffle exchanges 64-bit words within the running thread's warp: every
// lane of the warp must call it (mask must be the full warp).
enum ShuffleMode { kXor, kDown, kUp, kIdx };
uint64_t shuffle(unsigned mask, uint64_t bits, ShuffleMode mode, int arg, int width);
// trap ends the launch with an error.
[[noreturn]] void trap();

template <class T>
inline T shfl(unsigned mask, T v, ShuffleMode mode, int arg, int width) {
	static_assert(sizeof(T) <= 8, "shuffle of a type wider than 64 bits");
	uint64_t b = 0;
	memcpy(&b, &v, sizeof v);
	b = shuffle(mask, b, mode, arg, width);
	T r;
	memcpy(&r, &b, sizeof r);
	return r;
}
} // namespace hxemu

inline void __syncthreads() { hxemu::syncthreads(); }

template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
	return hxemu::shfl(mask, v, hxemu::kXor, laneMask, width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	return hxemu::shfl(mask, v, hxemu::kDown, (int)delta, width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	return hxemu::shfl(mask, v, hxemu::kUp, (int)delta, width);
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int srcLane, int width = 32) {
	return hxemu::shfl(mask, v, hxemu::kIdx, srcLane, width);
}

[[noreturn]] inline void __trap() { hxemu::trap(); }

// Rounding intrinsics: one IEEE operation each (g++ does not contract
// separate operations in ISO C++ mode, and x86-64 has no FMA by default).
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline unsigned int __float_as_uint(float f) {
	unsigned int u;
	memcpy(&u, &f, sizeof u);
	return u;
}
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
// __float2int_rn rounds to nearest, ties to even (the default rounding
// mode; no range checks: callers keep values well inside int).
inline int __float2int_rn(float f) { return (int)nearbyintf(f); }

// __dp4a: c plus the dot product of the four signed bytes of a and b.
inline int __dp4a(int a, int b, int c) {
	for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
	return c;
}

// Atomics, fences and cache-bypassing loads: the blocks of a launch run
// one after another, and the threads of a block take turns on one OS
// thread, so a plain read-modify-write is atomic, and there is nothing to
// order or bypass.
inline int atomicAdd(int* p, int v) {
	const int old = *p;
	*p = old + v;
	return old;
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
	const unsigned long long old = *p;
	if (v > old) *p = v;
	return old;
}
inline void __threadfence() {}
template <class T>
inline T __ldcg(const T* p) {
	return *p;
}

// CUDA's integer min and max.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

// __half holds the bits of an IEEE binary16 value.
struct __half {
	unsigned short x;
};

inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }

// __half2float converts exactly (infinities kept, NaNs stay NaN).
inline float __half2float(__half h) {
	const uint32_t sign = (uint32_t)(h.x & 0x8000) << 16;
	const uint32_t exp = (h.x >> 10) & 0x1f, mant = h.x & 0x3ff;
	uint32_t bits;
	if (exp == 0) { // zero or subnormal: mant·2^-24, exact in F32
		float f = (float)mant * 0x1p-24f;
		memcpy(&bits, &f, 4);
		bits |= sign;
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | (mant << 13);
	} else {
		bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

// __float2half_rn rounds to nearest even: overflow gives ±inf, subnormal
// halves are produced correctly, NaN gives the quiet NaN 0x7e00 (with f's
// sign, as pkg/compute/quant).
inline __half __float2half_rn(float f) {
	uint32_t x;
	memcpy(&x, &f, 4);
	const unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
	const uint32_t ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u) return __half{(unsigned short)(sign | 0x7e00)};
	if (ax >= 0x477ff000u) return __half{(unsigned short)(sign | 0x7c00)}; // ≥ 65520 (and inf) round to inf
	if (ax < 0x38800000u) {                                                  // below 2^-14: a subnormal half or zero
		float a;
		memcpy(&a, &ax, 4);
		return __half{(unsigned short)(sign | (unsigned short)nearbyintf(a * 0x1p24f))}; // exact scaling, RNE
	}
	uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax >> 13) & 0x3ff));
	const uint32_t rem = ax & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; // a carry moves into the exponent, as it should
	return __half{(unsigned short)(sign | h)};
}
