// Matrix-vector products with F32, F16 and quantized weights (decode): out is
// nx × rows (out[j·rows + row]), x is nx × cols, the weight rows × cols in
// its format. Grid (ceil(rows/4)), block 128: warp w of block b computes
// row 4b + w for every activation row (up to 8 at once, more in groups of
// 8), reading each weight block once and keeping one partial sum per
// activation row; F32 accumulation, a warp reduction at the end. cols is a
// multiple of the format's block size. The K-quants (Q4_K, Q5_K, Q6_K)
// take the activations as Q8_K records (xq: the same values, rounded by
// hx_round_q8k or a rounding norm) and multiply bytes by bytes with dp4a,
// as the CPU does; the other formats multiply the F32 activations x.
#include "common.cuh"

// HX_MV_ROWS is the rows of a block (one per warp); HX_MV_NX the
// activation rows computed per pass over the weights.
#define HX_MV_ROWS 4
#define HX_MV_NX 8

// HX_NX_DISPATCH calls CALL(N) for N = n, 1 ≤ n ≤ HX_MV_NX, as a
// compile-time constant (the partial sums of N activation rows live in
// registers).
#define HX_NX_DISPATCH(n, CALL)  \
	switch (n) {                 \
	case 1: CALL(1); break;      \
	case 2: CALL(2); break;      \
	case 3: CALL(3); break;      \
	case 4: CALL(4); break;      \
	case 5: CALL(5); break;      \
	case 6: CALL(6); break;      \
	case 7: CALL(7); break;      \
	default: CALL(8); break;     \
	}

// hx_mv_finish reduces the partial sums and writes them (lane j writes
// activation row j's).
template <int NX>
__device__ __forceinline__ void hx_mv_finish(float* acc, float* out, int row, int rows, int lane) {
#pragma unroll
	for (int j = 0; j < NX; j++) {
		const float s = hx_warp_sum(acc[j]);
		if (lane == j) out[(size_t)j * rows + row] = s;
	}
}

// hx_act is a product's activations: x, rows of cols floats (row j at x +
// j·cols), and q, the same rows as Q8_K records (HX_Q8K_REC; null where
// the weight's format takes x).
struct hx_act {
	const float* x;
	const unsigned char* q;
	int cols;
};

// hx_act_from is the activations x (F32) and xq (Q8_K records, or null) of
// cols values a row, from row j0 on.
__device__ __forceinline__ hx_act hx_act_from(const float* x, const unsigned char* xq, int cols, int j0) {
	return {x + (size_t)j0 * cols, xq ? xq + j0 * hx_q8k_rs(cols) : nullptr, cols};
}

// hx_dot adds to acc[j] the lanes' shares of the product of block b of a
// quantized format T (at blk) with activation row j. Lane l decodes
// elements 32i + l of the block (T::lane) and multiplies them with their
// activations in x; the K-quants below instead give each lane 8
// consecutive elements of one sub-block, so that it decodes one scale and
// factors it out of its sum, and take the activations' Q8_K records.
template <class T>
struct hx_dot {
	template <int NX>
	__device__ __forceinline__ static void add(float* acc, const unsigned char* blk, const hx_act& a, int b, int lane) {
		constexpr int PL = T::BS / 32;
		const float* xb = a.x + (size_t)b * T::BS;
		float v[PL];
		T::lane(blk, lane, v);
#pragma unroll
		for (int i = 0; i < PL; i++) {
#pragma unroll
			for (int j = 0; j < NX; j++) acc[j] += v[i] * xb[(size_t)j * a.cols + 32 * i + lane];
		}
	}
};

// How hx_dot_q8 weighs a lane's integer sums: the weight bytes q with the
// sub-block's min (ds·q − dm: Q4_K, Q5_K), or q − 32 (ds·(q − 32): Q6_K).
#define HX_Q_MIN 1
#define HX_Q_OFF32 2

// hx_dot_q8 adds to acc[j], for each activation row j, the product of the
// lane's 8 weight values (the unsigned bytes q of w0 and w1, weighed by
// MODE: ds·q − dm or ds·(q − 32)) with their activations: the bytes
// a at off … off+7 of the Q8_K record at rec + j·rs and its scale d. The
// sums Σ q·a and Σ a are integers (dp4a, exact), so each row costs one
// float expression: d·(ds·Σ q·a − dm·Σ a).
template <int NX, int MODE>
__device__ __forceinline__ void hx_dot_q8(float* acc, unsigned int w0, unsigned int w1, float ds, float dm,
                                          const unsigned char* rec, size_t rs, int off) {
#pragma unroll
	for (int j = 0; j < NX; j++) {
		const unsigned char* r = rec + j * rs;
		unsigned int a0, a1;
		hx_ld2u32(r + off, &a0, &a1);
		const float d = *(const float*)(r + 256);
		const int qa = hx_dp4a(w1, a1, hx_dp4a(w0, a0, 0));
		const int sa = hx_dp4a(0x01010101u, a1, hx_dp4a(0x01010101u, a0, 0));
		if (MODE == HX_Q_MIN)
			acc[j] += d * (ds * (float)qa - dm * (float)sa);
		else
			acc[j] += d * (ds * (float)(qa - 32 * sa));
	}
}

// hx_dot_k4 is hx_dot of Q4_K (H false) and Q5_K (H: a fifth bit at bit s
// of qh[8(l%4) + t], 32 bytes from byte 16): lane l takes elements
// 8(l%4) … +7 of sub-block s = l/4, the low (s even) or high nibbles of
// qs[32(s/2) + 8(l%4) …].
template <bool H>
struct hx_dot_k4 {
	template <int NX>
	__device__ __forceinline__ static void add(float* acc, const unsigned char* blk, const hx_act& a, int b, int lane) {
		const int s = lane >> 2, k = lane & 3;
		// the block's first 16 bytes (d, dmin, the 12 scale bytes) in one
		// load, the same for every lane (blocks of 144 and 176 bytes keep
		// 16-byte alignment), and the lane's 8 quant bytes (and fifth bits)
		// in one load each
		unsigned int hd[4], w0, w1, h0 = 0, h1 = 0;
		hx_ld4u32(blk, hd);
		hx_ld2u32(blk + (H ? 48 : 16) + 32 * (s >> 1) + 8 * k, &w0, &w1);
		if (H) hx_ld2u32(blk + 16 + 8 * k, &h0, &h1);
		int sc, m;
		hx_scale_min_k4w(s, hd[1], hd[2], hd[3], &sc, &m);
		const float ds = __fmul_rn(hx_h2f((unsigned short)hd[0]), (float)sc);
		const float dm = __fmul_rn(hx_h2f((unsigned short)(hd[0] >> 16)), (float)m);
		const unsigned int sh = 4 * (s & 1);
		// four values a word: each byte's nibble (and fifth bit)
		const unsigned int b0 = ((w0 >> sh) & 0x0F0F0F0Fu) | (H ? ((h0 >> s) & 0x01010101u) << 4 : 0u);
		const unsigned int b1 = ((w1 >> sh) & 0x0F0F0F0Fu) | (H ? ((h1 >> s) & 0x01010101u) << 4 : 0u);
		hx_dot_q8<NX, HX_Q_MIN>(acc, b0, b1, ds, dm, a.q + (size_t)b * HX_Q8K_REC, hx_q8k_rs(a.cols), 32 * s + 8 * k);
	}
};

template <>
struct hx_dot<hx_q4_k> : hx_dot_k4<false> {};

template <>
struct hx_dot<hx_q5_k> : hx_dot_k4<true> {};

// Q6_K: lane l takes elements 128h + 32g + 8k … +7 (h = l/16, g = l/4 % 4,
// k = l%4), all of one 16-element scale: low bits from ql[64h + 32(g&1) +
// 8k …] (high nibbles for g ≥ 2), high bits 2g, 2g+1 of qh[32h + 8k …].
template <>
struct hx_dot<hx_q6_k> {
	template <int NX>
	__device__ __forceinline__ static void add(float* acc, const unsigned char* blk, const hx_act& a, int b, int lane) {
		const int h = lane >> 4, g = (lane >> 2) & 3, k = lane & 3;
		const float ds = __fmul_rn(hx_half(blk + 208), (float)(signed char)blk[192 + 8 * h + 2 * g + (k >> 1)]);
		const unsigned char* ql = blk + 64 * h + 32 * (g & 1) + 8 * k;
		const unsigned char* qh = blk + 128 + 32 * h + 8 * k;
		const int lsh = g >= 2 ? 4 : 0;
		// four 16-bit loads each instead of eight byte loads (a block is 210
		// bytes: only 2-byte alignment holds for every block)
		unsigned int lw[4], hw[4];
#pragma unroll
		for (int u = 0; u < 4; u++) {
			lw[u] = hx_u16(ql + 2 * u);
			hw[u] = hx_u16(qh + 2 * u);
		}
		// four values a word: the low nibbles and the two high bits of each
		// byte (the bits a shift brings in from the next byte masked off)
		unsigned int q[2];
#pragma unroll
		for (int c = 0; c < 2; c++) {
			const unsigned int l = lw[2 * c] | lw[2 * c + 1] << 16, hb = hw[2 * c] | hw[2 * c + 1] << 16;
			q[c] = ((l >> lsh) & 0x0F0F0F0Fu) | (((hb >> (2 * g)) & 0x03030303u) << 4);
		}
		hx_dot_q8<NX, HX_Q_OFF32>(acc, q[0], q[1], ds, 0.0f, a.q + (size_t)b * HX_Q8K_REC, hx_q8k_rs(a.cols),
		                          128 * h + 32 * g + 8 * k);
	}
};

// hx_blocks_step adds to acc the lanes' shares of blocks b … b+U−1 of
// weight row wr (hx_dot), and with TWO to acc2 those of row wr2,
// unrolled so that their loads are in flight together; the sums are still
// added block after block.
template <class T, int NX, int U, bool TWO = false>
__device__ __forceinline__ void hx_blocks_step(float* acc, float* acc2, const unsigned char* __restrict__ wr,
                                               const unsigned char* __restrict__ wr2, const hx_act& a, int b,
                                               int lane) {
#pragma unroll
	for (int u = 0; u < U; u++) {
		hx_dot<T>::template add<NX>(acc, wr + (size_t)(b + u) * T::TS, a, b + u, lane);
		if (TWO) hx_dot<T>::template add<NX>(acc2, wr2 + (size_t)(b + u) * T::TS, a, b + u, lane);
	}
}

// hx_mv_blocks_acc leaves in acc each lane's partial sums of the product
// for NX activation rows with a quantized format T (hx_dot per block).
template <class T, int NX>
__device__ __forceinline__ void hx_mv_blocks_acc(float* acc, const unsigned char* __restrict__ w, const hx_act& a,
                                                 int row, int lane) {
	const int nb = a.cols / T::BS;
	const unsigned char* wr = w + (size_t)row * nb * T::TS;
#pragma unroll
	for (int j = 0; j < NX; j++) acc[j] = 0.0f;
	// blocks in flight together (a decode product is bound by memory
	// latency; a legacy block gives each lane one element, a K-quant block
	// 8): eight when one or two activation rows leave registers for them,
	// else four
	int b = 0;
	if (NX <= 2) {
		for (; b + 8 <= nb; b += 8) hx_blocks_step<T, NX, 8>(acc, nullptr, wr, nullptr, a, b, lane);
	}
	for (; b + 4 <= nb; b += 4) hx_blocks_step<T, NX, 4>(acc, nullptr, wr, nullptr, a, b, lane);
	for (; b < nb; b++) hx_blocks_step<T, NX, 1>(acc, nullptr, wr, nullptr, a, b, lane);
}

// hx_mv_blocks is the product for NX activation rows with a quantized
// format T.
template <class T, int NX>
__device__ __forceinline__ void hx_mv_blocks(float* __restrict__ out, const unsigned char* __restrict__ w,
                                             const hx_act& a, int row, int rows, int lane) {
	float acc[NX];
	hx_mv_blocks_acc<T, NX>(acc, w, a, row, lane);
	hx_mv_finish<NX>(acc, out, row, rows, lane);
}

__device__ __forceinline__ float hx_w_at(const unsigned short* p) { return hx_h2f(*p); }
__device__ __forceinline__ float hx_w_at(const float* p) { return *p; }

// hx_mv_dense_acc is hx_mv_blocks_acc for F16 or F32 weights (W): lane l
// takes elements l, l+32, … of the row (any cols).
template <class W, int NX>
__device__ __forceinline__ void hx_mv_dense_acc(float* acc, const W* __restrict__ w, const hx_act& a, int row,
                                                int lane) {
	const int cols = a.cols;
	const float* __restrict__ x = a.x;
	const W* wr = w + (size_t)row * cols;
#pragma unroll
	for (int j = 0; j < NX; j++) acc[j] = 0.0f;
#pragma unroll 4
	for (int e = lane; e < cols; e += 32) {
		const float v = hx_w_at(wr + e);
#pragma unroll
		for (int j = 0; j < NX; j++) acc[j] += v * x[(size_t)j * cols + e];
	}
}

// hx_mv_dense is the product for NX activation rows with F16 or F32
// weights.
template <class W, int NX>
__device__ __forceinline__ void hx_mv_dense(float* __restrict__ out, const W* __restrict__ w, const hx_act& a, int row,
                                            int rows, int lane) {
	float acc[NX];
	hx_mv_dense_acc<W, NX>(acc, w, a, row, lane);
	hx_mv_finish<NX>(acc, out, row, rows, lane);
}

// hx_mv runs the product for every group of up to HX_MV_NX activation rows;
// body is hx_mv_blocks<T, NX> or hx_mv_dense<W, NX> by way of the functor F.
template <class F, class W>
__device__ __forceinline__ void hx_mv(float* out, const W* w, const float* x, const unsigned char* xq, int rows,
                                      int cols, int nx) {
	const int lane = threadIdx.x & 31;
	const int row = blockIdx.x * HX_MV_ROWS + (threadIdx.x >> 5);
	if (row >= rows) return; // the whole warp leaves together
	const size_t rb = F::row_bytes(cols);
	hx_prefetch_l2((const char*)w + (size_t)row * rb, rb, lane);
	hx_grid_wait();
	for (int j0 = 0; j0 < nx; j0 += HX_MV_NX) {
		const hx_act aj = hx_act_from(x, xq, cols, j0);
		float* oj = out + (size_t)j0 * rows;
#define HX_MV_CALL(N) F::template run<N>(oj, w, aj, row, rows, lane)
		HX_NX_DISPATCH(nx - j0 < HX_MV_NX ? nx - j0 : HX_MV_NX, HX_MV_CALL);
#undef HX_MV_CALL
	}
}

// hx_row_bytes is a weight row's size: cols values of the quantized format
// T (a block type) or of F16/F32 (unsigned short, float).
template <class T>
__device__ __forceinline__ size_t hx_row_bytes(int cols) {
	return (size_t)(cols / T::BS) * T::TS;
}
template <>
__device__ __forceinline__ size_t hx_row_bytes<unsigned short>(int cols) {
	return (size_t)cols * 2;
}
template <>
__device__ __forceinline__ size_t hx_row_bytes<float>(int cols) {
	return (size_t)cols * 4;
}

template <class T>
struct hx_mv_quant {
	__device__ __forceinline__ static size_t row_bytes(int cols) { return hx_row_bytes<T>(cols); }
	template <int NX>
	__device__ __forceinline__ static void run(float* out, const unsigned char* w, const hx_act& a, int row, int rows,
	                                           int lane) {
		hx_mv_blocks<T, NX>(out, w, a, row, rows, lane);
	}
};

template <class W>
struct hx_mv_dense_body {
	__device__ __forceinline__ static size_t row_bytes(int cols) { return hx_row_bytes<W>(cols); }
	template <int NX>
	__device__ __forceinline__ static void run(float* out, const W* w, const hx_act& a, int row, int rows, int lane) {
		hx_mv_dense<W, NX>(out, w, a, row, rows, lane);
	}
};

// Every product kernel takes both x and xq (null where its format does
// not read it), so that the host passes the same arguments to all.
extern "C" __global__ void hx_mv_f16(float* out, const unsigned short* w, const float* x, const unsigned char* xq,
                                     int rows, int cols, int nx) {
	hx_mv<hx_mv_dense_body<unsigned short>>(out, w, x, xq, rows, cols, nx);
}

extern "C" __global__ void hx_mv_f32(float* out, const float* w, const float* x, const unsigned char* xq, int rows,
                                     int cols, int nx) {
	hx_mv<hx_mv_dense_body<float>>(out, w, x, xq, rows, cols, nx);
}

#define HX_MV_KERNEL(name, T)                                                                              \
	extern "C" __global__ void name(float* out, const unsigned char* w, const float* x, const unsigned char* xq, \
	                                int rows, int cols, int nx) {                                              \
		hx_mv<hx_mv_quant<T>>(out, w, x, xq, rows, cols, nx);                                              \
	}

HX_MV_KERNEL(hx_mv_q8_0, hx_q8_0)
HX_MV_KERNEL(hx_mv_q4_0, hx_q4_0)
HX_MV_KERNEL(hx_mv_q4_k, hx_q4_k)
HX_MV_KERNEL(hx_mv_q5_k, hx_q5_k)
HX_MV_KERNEL(hx_mv_q6_k, hx_q6_k)

// Multi-weight products (compute.MultiMatMulBackend): up to three weights
// of one format times the same activations in one launch, weight
// blockIdx.y; grid (ceil(max rows/4), count). Unused slots have rows 0.
template <class F, class W>
__device__ __forceinline__ void hx_mv3(float* o0, const W* w0, int r0, float* o1, const W* w1, int r1, float* o2,
                                       const W* w2, int r2, const float* x, const unsigned char* xq, int cols, int nx) {
	float* o = blockIdx.y == 0 ? o0 : blockIdx.y == 1 ? o1 : o2;
	const W* w = blockIdx.y == 0 ? w0 : blockIdx.y == 1 ? w1 : w2;
	const int rows = blockIdx.y == 0 ? r0 : blockIdx.y == 1 ? r1 : r2;
	if ((int)blockIdx.x * HX_MV_ROWS >= rows) return; // the whole block leaves together
	hx_mv<F>(o, w, x, xq, rows, cols, nx);
}

#define HX_MV3_KERNEL(name, F, W)                                                                               \
	extern "C" __global__ void name(float* o0, const W* w0, int r0, float* o1, const W* w1, int r1, float* o2,   \
	                                const W* w2, int r2, const float* x, const unsigned char* xq, int cols,      \
	                                int nx) {                                                                    \
		hx_mv3<F>(o0, w0, r0, o1, w1, r1, o2, w2, r2, x, xq, cols, nx);                                         \
	}

HX_MV3_KERNEL(hx_mv3_f16, hx_mv_dense_body<unsigned short>, unsigned short)
HX_MV3_KERNEL(hx_mv3_f32, hx_mv_dense_body<float>, float)
HX_MV3_KERNEL(hx_mv3_q8_0, hx_mv_quant<hx_q8_0>, unsigned char)
HX_MV3_KERNEL(hx_mv3_q4_0, hx_mv_quant<hx_q4_0>, unsigned char)
HX_MV3_KERNEL(hx_mv3_q4_k, hx_mv_quant<hx_q4_k>, unsigned char)
HX_MV3_KERNEL(hx_mv3_q5_k, hx_mv_quant<hx_q5_k>, unsigned char)
HX_MV3_KERNEL(hx_mv3_q6_k, hx_mv_quant<hx_q6_k>, unsigned char)

// Gated products (compute.FusedBackend's GatedMatMul): out = SwiGLU(gate·x,
// up·x) for two weights of one format, each warp computing both of its
// row's products (exactly as hx_mv does) and then hx_swiglu's formula.
// Grid ceil(rows/4), block 128.
template <class T>
struct hx_acc_quant {
	__device__ __forceinline__ static size_t row_bytes(int cols) { return hx_row_bytes<T>(cols); }
	// acc2 leaves in g and u the lanes' partial sums of the products with
	// wg and wu (as hx_mv_blocks_acc for each), taking both weights' block b
	// in the same iteration, four blocks of each at a time for one or two
	// activation rows and two for more: each sum still added block after
	// block.
	template <int NX>
	__device__ __forceinline__ static void acc2(float* g, float* u, const unsigned char* __restrict__ wg,
	                                            const unsigned char* __restrict__ wu, const hx_act& a, int row,
	                                            int lane) {
		const int nb = a.cols / T::BS;
		const unsigned char* gr = wg + (size_t)row * nb * T::TS;
		const unsigned char* ur = wu + (size_t)row * nb * T::TS;
#pragma unroll
		for (int j = 0; j < NX; j++) g[j] = u[j] = 0.0f;
		int b = 0;
		if (NX <= 2) {
			for (; b + 4 <= nb; b += 4) hx_blocks_step<T, NX, 4, true>(g, u, gr, ur, a, b, lane);
		}
		for (; b + 2 <= nb; b += 2) hx_blocks_step<T, NX, 2, true>(g, u, gr, ur, a, b, lane);
		for (; b < nb; b++) hx_blocks_step<T, NX, 1, true>(g, u, gr, ur, a, b, lane);
	}
};

template <class W>
struct hx_acc_dense {
	__device__ __forceinline__ static size_t row_bytes(int cols) { return hx_row_bytes<W>(cols); }
	template <int NX>
	__device__ __forceinline__ static void acc2(float* g, float* u, const W* wg, const W* wu, const hx_act& a, int row,
	                                            int lane) {
		hx_mv_dense_acc<W, NX>(g, wg, a, row, lane);
		hx_mv_dense_acc<W, NX>(u, wu, a, row, lane);
	}
};

template <class A, class W, int NX>
__device__ __forceinline__ void hx_mvg_rows(float* out, const W* wg, const W* wu, const hx_act& a, int row, int rows,
                                            int lane) {
	float g[NX], u[NX];
	A::template acc2<NX>(g, u, wg, wu, a, row, lane);
#pragma unroll
	for (int j = 0; j < NX; j++) {
		const float gs = hx_warp_sum(g[j]), us = hx_warp_sum(u[j]);
		if (lane == j) out[(size_t)j * rows + row] = gs / (1.0f + expf(-gs)) * us;
	}
}

template <class A, class W>
__device__ __forceinline__ void hx_mvg(float* out, const W* wg, const W* wu, const float* x, const unsigned char* xq,
                                       int rows, int cols, int nx) {
	const int lane = threadIdx.x & 31;
	const int row = blockIdx.x * HX_MV_ROWS + (threadIdx.x >> 5);
	if (row >= rows) return;
	const size_t rb = A::row_bytes(cols);
	hx_prefetch_l2((const char*)wg + (size_t)row * rb, rb, lane);
	hx_prefetch_l2((const char*)wu + (size_t)row * rb, rb, lane);
	hx_grid_wait();
	for (int j0 = 0; j0 < nx; j0 += HX_MV_NX) {
		const hx_act aj = hx_act_from(x, xq, cols, j0);
		float* oj = out + (size_t)j0 * rows;
#define HX_MVG_CALL(N) hx_mvg_rows<A, W, N>(oj, wg, wu, aj, row, rows, lane)
		HX_NX_DISPATCH(nx - j0 < HX_MV_NX ? nx - j0 : HX_MV_NX, HX_MVG_CALL);
#undef HX_MVG_CALL
	}
}

#define HX_MVG_KERNEL(name, A, W)                                                                               \
	extern "C" __global__ void name(float* out, const W* wg, const W* wu, const float* x, const unsigned char* xq, \
	                                int rows, int cols, int nx) {                                                \
		hx_mvg<A, W>(out, wg, wu, x, xq, rows, cols, nx);                                                       \
	}

HX_MVG_KERNEL(hx_mvg_f16, hx_acc_dense<unsigned short>, unsigned short)
HX_MVG_KERNEL(hx_mvg_f32, hx_acc_dense<float>, float)
HX_MVG_KERNEL(hx_mvg_q8_0, hx_acc_quant<hx_q8_0>, unsigned char)
HX_MVG_KERNEL(hx_mvg_q4_0, hx_acc_quant<hx_q4_0>, unsigned char)
HX_MVG_KERNEL(hx_mvg_q4_k, hx_acc_quant<hx_q4_k>, unsigned char)
HX_MVG_KERNEL(hx_mvg_q5_k, hx_acc_quant<hx_q5_k>, unsigned char)
HX_MVG_KERNEL(hx_mvg_q6_k, hx_acc_quant<hx_q6_k>, unsigned char)

// Tall products (an output head: one activation row, tens of thousands of
// weight rows): each warp computes two consecutive rows, taking both rows'
// blocks in the same iterations (hx_acc_quant's acc2, as gate·up does), so
// that a warp keeps twice hx_mv's loads in flight and a launch has half
// the blocks. Each row's sums are hx_mv's, in the same order: the same
// bits. Grid ceil(rows/8), block 128.
template <class A, class W>
__device__ __forceinline__ void hx_mv2(float* out, const W* w, const float* x, const unsigned char* xq, int rows,
                                       int cols) {
	const int lane = threadIdx.x & 31;
	const int row = 2 * (blockIdx.x * HX_MV_ROWS + (threadIdx.x >> 5));
	if (row >= rows) return;
	const size_t rb = A::row_bytes(cols);
	const bool two = row + 1 < rows;
	hx_prefetch_l2((const char*)w + (size_t)row * rb, two ? 2 * rb : rb, lane);
	hx_grid_wait();
	// the second row's weights start a row on; the last of an odd count
	// takes its own row again, and does not write it
	const W* w1 = two ? (const W*)((const char*)w + rb) : w;
	float s0[1], s1[1];
	const hx_act act = hx_act_from(x, xq, cols, 0);
	A::template acc2<1>(s0, s1, w, w1, act, row, lane);
	const float a = hx_warp_sum(s0[0]), b = hx_warp_sum(s1[0]);
	if (lane == 0) out[row] = a;
	if (lane == 1 && two) out[row + 1] = b;
}

#define HX_MV2_KERNEL(name, A, W)                                                                       \
	extern "C" __global__ void name(float* out, const W* w, const float* x, const unsigned char* xq, int rows, \
	                                int cols) {                                                                  \
		hx_mv2<A, W>(out, w, x, xq, rows, cols);                                                                 \
	}

HX_MV2_KERNEL(hx_mv2_f16, hx_acc_dense<unsigned short>, unsigned short)
HX_MV2_KERNEL(hx_mv2_f32, hx_acc_dense<float>, float)
HX_MV2_KERNEL(hx_mv2_q8_0, hx_acc_quant<hx_q8_0>, unsigned char)
HX_MV2_KERNEL(hx_mv2_q4_0, hx_acc_quant<hx_q4_0>, unsigned char)
HX_MV2_KERNEL(hx_mv2_q4_k, hx_acc_quant<hx_q4_k>, unsigned char)
HX_MV2_KERNEL(hx_mv2_q5_k, hx_acc_quant<hx_q5_k>, unsigned char)
HX_MV2_KERNEL(hx_mv2_q6_k, hx_acc_quant<hx_q6_k>, unsigned char)
