// The kernels, compiled by g++ from the same sources nvcc compiles, and the
// table that maps their names to wrappers taking hx_emu_arg arrays.
#include "cuda_emu.h"

// The kernels' C symbols get an hxemu_ prefix here: the test binaries that
// link the emulator also link pkg/compute's C kernels, which have some of
// the same names (hx_swiglu). The table below keeps the ABI names (#name
// of HX_K is the unexpanded one).
#define hx_swiglu hxemu_hx_swiglu
#define hx_geglu hxemu_hx_geglu
#define hx_softcap hxemu_hx_softcap
#define hx_add hxemu_hx_add
#define hx_add_row hxemu_hx_add_row
#define hx_gather_rows hxemu_hx_gather_rows
#define hx_scale_rows_to hxemu_hx_scale_rows_to
#define hx_sum_row_groups hxemu_hx_sum_row_groups
#define hx_f32_to_f16 hxemu_hx_f32_to_f16
#define hx_store_kv_f32 hxemu_hx_store_kv_f32
#define hx_store_kv_f16 hxemu_hx_store_kv_f16
#define hx_rope hxemu_hx_rope
#define hx_trap hxemu_hx_trap
#define hx_rmsnorm hxemu_hx_rmsnorm
#define hx_attention_f32 hxemu_hx_attention_f32
#define hx_attention_f16 hxemu_hx_attention_f16
#define hx_mv_f32 hxemu_hx_mv_f32
#define hx_attention_part_f32 hxemu_hx_attention_part_f32
#define hx_attention_part_f16 hxemu_hx_attention_part_f16
#define hx_rows_f32 hxemu_hx_rows_f32
#define hx_rows_f16 hxemu_hx_rows_f16
#define hx_rows_q8_0 hxemu_hx_rows_q8_0
#define hx_rows_q4_0 hxemu_hx_rows_q4_0
#define hx_rows_q4_k hxemu_hx_rows_q4_k
#define hx_rows_q5_k hxemu_hx_rows_q5_k
#define hx_rows_q6_k hxemu_hx_rows_q6_k
#define hx_conv_silu hxemu_hx_conv_silu
#define hx_l2norm_heads hxemu_hx_l2norm_heads
#define hx_delta_net hxemu_hx_delta_net
#define hx_split_heads hxemu_hx_split_heads
#define hx_sigmoid_mul hxemu_hx_sigmoid_mul
#define hx_mv_f16 hxemu_hx_mv_f16
#define hx_mv_q8_0 hxemu_hx_mv_q8_0
#define hx_mv_q4_0 hxemu_hx_mv_q4_0
#define hx_mv_q4_k hxemu_hx_mv_q4_k
#define hx_mv_q5_k hxemu_hx_mv_q5_k
#define hx_mv_q6_k hxemu_hx_mv_q6_k
#define hx_add_rmsnorm_q8k hxemu_hx_add_rmsnorm_q8k
#define hx_rmsnorm_q8k hxemu_hx_rmsnorm_q8k
#define hx_rope2_store_f32 hxemu_hx_rope2_store_f32
#define hx_rope2_store_f16 hxemu_hx_rope2_store_f16
#define hx_argmax_rows hxemu_hx_argmax_rows
#define hx_dq32_q8_0 hxemu_hx_dq32_q8_0
#define hx_dq32_q4_0 hxemu_hx_dq32_q4_0
#define hx_dq32_q4_k hxemu_hx_dq32_q4_k
#define hx_dq32_q5_k hxemu_hx_dq32_q5_k
#define hx_dq32_q6_k hxemu_hx_dq32_q6_k
#define hx_round_q8k hxemu_hx_round_q8k
#define hx_round_q8_0 hxemu_hx_round_q8_0
#define hx_mvg_f16 hxemu_hx_mvg_f16
#define hx_mvg_f32 hxemu_hx_mvg_f32
#define hx_mvg_q8_0 hxemu_hx_mvg_q8_0
#define hx_mvg_q4_0 hxemu_hx_mvg_q4_0
#define hx_mvg_q4_k hxemu_hx_mvg_q4_k
#define hx_mvg_q5_k hxemu_hx_mvg_q5_k
#define hx_mvg_q6_k hxemu_hx_mvg_q6_k
#define hx_add_rmsnorm hxemu_hx_add_rmsnorm
#define hx_rmsnorm2 hxemu_hx_rmsnorm2
#define hx_mv2_f16 hxemu_hx_mv2_f16
#define hx_mv2_f32 hxemu_hx_mv2_f32
#define hx_mv2_q8_0 hxemu_hx_mv2_q8_0
#define hx_mv2_q4_0 hxemu_hx_mv2_q4_0
#define hx_mv2_q4_k hxemu_hx_mv2_q4_k
#define hx_mv2_q5_k hxemu_hx_mv2_q5_k
#define hx_mv2_q6_k hxemu_hx_mv2_q6_k
#define hx_mv3_f16 hxemu_hx_mv3_f16
#define hx_mv3_f32 hxemu_hx_mv3_f32
#define hx_mv3_q8_0 hxemu_hx_mv3_q8_0
#define hx_mv3_q4_0 hxemu_hx_mv3_q4_0
#define hx_mv3_q4_k hxemu_hx_mv3_q4_k
#define hx_mv3_q5_k hxemu_hx_mv3_q5_k
#define hx_mv3_q6_k hxemu_hx_mv3_q6_k

#include "../kernels/all.cu"

// Kernels that exercise the emulator itself (not part of the ABI: their
// names start with emu_test_).

// Every lane writes what four shuffles gave it: xor 1, down 3, up 5, and
// lane 7 of its group of 8.
extern "C" __global__ void emu_test_shuffles(int *out) {
	const int l = threadIdx.x;
	out[4 * l + 0] = __shfl_xor_sync(0xffffffffu, l, 1);
	out[4 * l + 1] = __shfl_down_sync(0xffffffffu, l, 3);
	out[4 * l + 2] = __shfl_up_sync(0xffffffffu, l, 5);
	out[4 * l + 3] = __shfl_sync(0xffffffffu, l, 7, 8);
}

// Thread i of block b reads what thread n-1-i wrote to shared memory.
extern "C" __global__ void emu_test_shared(int *out) {
	__shared__ int s[1024];
	s[threadIdx.x] = 1000 * blockIdx.x + threadIdx.x;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

// Thread 3 returns before the barrier the others wait at.
extern "C" __global__ void emu_test_early_return(int *out) {
	if (threadIdx.x == 3) return;
	__syncthreads();
	out[threadIdx.x] = 1;
}

// Half of the warp shuffles.
extern "C" __global__ void emu_test_half_warp(int *out) {
	if (threadIdx.x < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}

// Thread 0 of block 0 writes v to out[i] (past the end when asked to).
extern "C" __global__ void emu_test_write(int *out, int i, int v) {
	if (threadIdx.x == 0 && blockIdx.x == 0) out[i] = v;
}

// Thread 0 writes through a const pointer.
extern "C" __global__ void emu_test_const_write(const int *in) {
	if (threadIdx.x == 0) const_cast<int *>(in)[0] = 1;
}

#include <type_traits>
#include <utility>

#include "emu_internal.h"

namespace {

// Sig is the signature character of a parameter type (emu.h).
template <class T>
struct Sig;
template <>
struct Sig<float *> {
	static constexpr char c = 'f';
};
template <>
struct Sig<const float *> {
	static constexpr char c = 'F';
};
template <>
struct Sig<int *> {
	static constexpr char c = 'i';
};
template <>
struct Sig<const int *> {
	static constexpr char c = 'I';
};
template <>
struct Sig<unsigned short *> {
	static constexpr char c = 'h';
};
template <>
struct Sig<const unsigned short *> {
	static constexpr char c = 'H';
};
template <>
struct Sig<unsigned char *> {
	static constexpr char c = 'b';
};
template <>
struct Sig<const unsigned char *> {
	static constexpr char c = 'B';
};
template <>
struct Sig<unsigned long long *> {
	static constexpr char c = 'q';
};
template <>
struct Sig<int> {
	static constexpr char c = 'n';
};
template <>
struct Sig<float> {
	static constexpr char c = 'x';
};

template <class T>
T unpack(const hx_emu_arg &a) {
	if constexpr (std::is_pointer_v<T>) {
		return static_cast<T>(a.p);
	} else if constexpr (std::is_same_v<T, int>) {
		return a.i;
	} else {
		static_assert(std::is_same_v<T, float>, "kernel parameter of an unsupported type");
		return a.f;
	}
}

// Wrap<F> is the table entry of kernel F: its signature and a call with
// unpacked arguments.
template <auto F>
struct Wrap;
template <class... A, void (*F)(A...)>
struct Wrap<F> {
	static constexpr char sig[sizeof...(A) + 1] = {Sig<A>::c..., 0};
	static void invoke([[maybe_unused]] const hx_emu_arg *a) { call(a, std::index_sequence_for<A...>{}); }
	template <size_t... I>
	static void call([[maybe_unused]] const hx_emu_arg *a, std::index_sequence<I...>) {
		F(unpack<A>(a[I])...);
	}
};

} // namespace

#define HX_K(name) {#name, Wrap<name>::sig, &Wrap<name>::invoke}

namespace hxemu {

// kKernels lists every kernel of the ABI (kernels.Names() in Go; a test
// checks that the two agree), then the emulator's own test kernels.
const KernelInfo kKernels[] = {
    HX_K(hx_swiglu),        HX_K(hx_geglu),        HX_K(hx_softcap),       HX_K(hx_add),
    HX_K(hx_add_row),       HX_K(hx_gather_rows),  HX_K(hx_scale_rows_to), HX_K(hx_sum_row_groups),
    HX_K(hx_f32_to_f16),    HX_K(hx_store_kv_f32), HX_K(hx_store_kv_f16),  HX_K(hx_rope),
    HX_K(hx_trap),          HX_K(hx_rmsnorm),      HX_K(hx_attention_f32), HX_K(hx_attention_f16),
    HX_K(hx_mv_f32), HX_K(hx_mv_f16),        HX_K(hx_mv_q8_0),      HX_K(hx_mv_q4_0),       HX_K(hx_mv_q4_k),
    HX_K(hx_mv_q5_k),       HX_K(hx_mv_q6_k),
    HX_K(hx_conv_silu),     HX_K(hx_l2norm_heads), HX_K(hx_delta_net),     HX_K(hx_split_heads),
    HX_K(hx_sigmoid_mul),
    HX_K(hx_attention_part_f32), HX_K(hx_attention_part_f16),
    HX_K(hx_rows_f32), HX_K(hx_rows_f16), HX_K(hx_rows_q8_0), HX_K(hx_rows_q4_0), HX_K(hx_rows_q4_k), HX_K(hx_rows_q5_k), HX_K(hx_rows_q6_k),
    HX_K(hx_dq32_q8_0), HX_K(hx_dq32_q4_0), HX_K(hx_dq32_q4_k), HX_K(hx_dq32_q5_k), HX_K(hx_dq32_q6_k),
    HX_K(hx_argmax_rows), HX_K(hx_round_q8k), HX_K(hx_round_q8_0), HX_K(hx_add_rmsnorm), HX_K(hx_add_rmsnorm_q8k), HX_K(hx_rmsnorm_q8k), HX_K(hx_rmsnorm2), HX_K(hx_rope2_store_f32), HX_K(hx_rope2_store_f16), HX_K(hx_norm_rope2_store_f32), HX_K(hx_norm_rope2_store_f16),
    HX_K(hx_mvg_f16), HX_K(hx_mvg_f32), HX_K(hx_mvg_q8_0), HX_K(hx_mvg_q4_0), HX_K(hx_mvg_q4_k), HX_K(hx_mvg_q5_k), HX_K(hx_mvg_q6_k),
    HX_K(hx_mv3_f16), HX_K(hx_mv3_f32), HX_K(hx_mv3_q8_0), HX_K(hx_mv3_q4_0), HX_K(hx_mv3_q4_k), HX_K(hx_mv3_q5_k), HX_K(hx_mv3_q6_k),
    HX_K(hx_mv2_f16), HX_K(hx_mv2_f32), HX_K(hx_mv2_q8_0), HX_K(hx_mv2_q4_0), HX_K(hx_mv2_q4_k), HX_K(hx_mv2_q5_k), HX_K(hx_mv2_q6_k),

    HX_K(emu_test_shuffles), HX_K(emu_test_shared), HX_K(emu_test_early_return), HX_K(emu_test_half_warp),
    HX_K(emu_test_write),    HX_K(emu_test_const_write),
};
const int kKernelCount = sizeof kKernels / sizeof kKernels[0];

} // namespace hxemu

// HX_Q8K_REC, for the Go constant's test (Q8KRecord).
extern "C" int hx_emu_q8k_record(void) { return HX_Q8K_REC; }
