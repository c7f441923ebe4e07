// Element-wise and row-copy kernels: one element per thread over a
// grid-stride loop (launched with ceil(N/256) blocks of 256, N as each
// kernel says), so any grid covers N and an overshooting grid is harmless.
#include "common.cuh"

// HX_FOR_N runs the statement for every index i < n of this thread's
// grid-stride share.
#define HX_FOR_N(i, n) \
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// out = silu(gate)·up = gate/(1+exp(−gate))·up. N = n.
extern "C" __global__ void hx_swiglu(float* __restrict__ out, const float* __restrict__ gate, const float* __restrict__ up,
                                     int n) {
	hx_grid_wait();
	HX_FOR_N(i, n) {
		const float g = gate[i];
		out[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

// hx_gelu is ggml's tanh-approximated GELU in F32 (gelu.go's geluF32).
__device__ __forceinline__ float hx_gelu(float x) {
	const float coefA = 0.044715f, sqrt2OverPi = 0.79788456080286535587989211986876f;
	return 0.5f * x * (1.0f + tanhf(sqrt2OverPi * x * (1.0f + coefA * x * x)));
}

// hx_gelu_f16 is ggml-cpu's GELU (the CPU backend's too): inside ±10, the
// F16 of the GELU of the F16 of x (what its F16 table holds); 0 below, x
// above. llama.cpp's references come from the CPU, so the GPU rounds alike.
__device__ __forceinline__ float hx_gelu_f16(float x) {
	if (x <= -10.0f) return 0.0f;
	if (x >= 10.0f) return x;
	return hx_h2f(hx_f2h(hx_gelu(hx_h2f(hx_f2h(x)))));
}

// out = gelu(gate)·up, GELU as hx_gelu_f16. N = n.
extern "C" __global__ void hx_geglu(float* __restrict__ out, const float* __restrict__ gate, const float* __restrict__ up,
                                    int n) {
	hx_grid_wait();
	HX_FOR_N(i, n) { out[i] = hx_gelu_f16(gate[i]) * up[i]; }
}

// x = tanh(x/c)·c, as the CPU: x·(1/c), tanh, ·c. N = n.
extern "C" __global__ void hx_softcap(float* __restrict__ x, int n, float c) {
	hx_grid_wait();
	const float inv = 1.0f / c;
	HX_FOR_N(i, n) { x[i] = tanhf(x[i] * inv) * c; }
}

// dst += src. N = n.
extern "C" __global__ void hx_add(float* __restrict__ dst, const float* __restrict__ src, int n) {
	hx_grid_wait();
	HX_FOR_N(i, n) { dst[i] += src[i]; }
}

// x[r][c] += bias[c] for rows × cols values. N = rows·cols.
extern "C" __global__ void hx_add_row(float* __restrict__ x, const float* __restrict__ bias, int rows, int cols) {
	hx_grid_wait();
	HX_FOR_N(i, rows * cols) { x[i] += bias[i % cols]; }
}

// dst row i = src row idx[i], for n rows of cols. N = n·cols.
extern "C" __global__ void hx_gather_rows(float* __restrict__ dst, const float* __restrict__ src,
                                          const int* __restrict__ idx, int n, int cols) {
	hx_grid_wait();
	HX_FOR_N(i, n * cols) {
		const int r = i / cols, c = i - r * cols;
		dst[i] = src[(size_t)idx[r] * cols + c];
	}
}

// dst row to[i] = scale[i]·src row i, for n rows of cols (other rows of
// dst untouched). N = n·cols.
extern "C" __global__ void hx_scale_rows_to(float* __restrict__ dst, const float* __restrict__ src,
                                            const int* __restrict__ to, const float* __restrict__ scale, int n,
                                            int cols) {
	hx_grid_wait();
	HX_FOR_N(i, n * cols) {
		const int r = i / cols, c = i - r * cols;
		dst[(size_t)to[r] * cols + c] = src[i] * scale[r];
	}
}

// out[r] = src[r·k] + src[r·k+1] + … + src[r·k+k−1] (rows of cols), added
// in that order. N = rows·cols.
extern "C" __global__ void hx_sum_row_groups(float* __restrict__ out, const float* __restrict__ src, int k, int rows,
                                             int cols) {
	hx_grid_wait();
	HX_FOR_N(i, rows * cols) {
		const int r = i / cols, c = i - r * cols;
		const float* s = src + (size_t)r * k * cols + c;
		float acc = s[0];
		for (int j = 1; j < k; j++) acc += s[(size_t)j * cols];
		out[i] = acc;
	}
}

// out = F16 bits of in, rounded to nearest even. N = n.
extern "C" __global__ void hx_f32_to_f16(unsigned short* __restrict__ out, const float* __restrict__ in, int n) {
	hx_grid_wait();
	HX_FOR_N(i, n) { out[i] = hx_f2h(in[i]); }
}

// Rows of k and v (kvDim wide) to their slots of one layer's KV store:
// kc[slot[r]·kvDim + i] = k[r·kvDim + i], and vc from v. N = rows·kvDim.
extern "C" __global__ void hx_store_kv_f32(float* __restrict__ kc, float* __restrict__ vc, const float* __restrict__ k,
                                           const float* __restrict__ v, const int* __restrict__ slot, int rows,
                                           int kvDim) {
	hx_grid_wait();
	HX_FOR_N(i, rows * kvDim) {
		const int r = i / kvDim, c = i - r * kvDim;
		const size_t o = (size_t)slot[r] * kvDim + c;
		kc[o] = k[i];
		vc[o] = v[i];
	}
}

// hx_store_kv_f32 into an F16 store (rounded to nearest even).
extern "C" __global__ void hx_store_kv_f16(unsigned short* __restrict__ kc, unsigned short* __restrict__ vc,
                                           const float* __restrict__ k, const float* __restrict__ v,
                                           const int* __restrict__ slot, int rows, int kvDim) {
	hx_grid_wait();
	HX_FOR_N(i, rows * kvDim) {
		const int r = i / kvDim, c = i - r * kvDim;
		const size_t o = (size_t)slot[r] * kvDim + c;
		kc[o] = hx_f2h(k[i]);
		vc[o] = hx_f2h(v[i]);
	}
}

// Rotary position embedding in place. x holds rows of heads × headDim; for
// row r, head h and pair i < dims/2 the angle is pos[r]·base^(−2i/dims),
// divided by freqFactors[i] (when not null), times freqScale. neox = 0
// rotates (x[2i], x[2i+1]) of the head, neox = 1 (x[i], x[i+dims/2]); the
// values past dims pass through. N = rows·heads·(dims/2).
//
// The angle is computed as the CPU backend does (rope.go, after ggml-cpu):
// theta_scale = base^(−2/dims) in double rounded to F32, then the F32
// recurrence theta_{i+1} = theta_i·theta_scale from theta_0 = pos, so the
// angles equal the CPU's bit for bit; only sin and cos (F32 here, double
// rounded to F32 there) differ, by an ulp or so.
// hx_rope_angle gives the sine and cosine of pair i's angle at position
// pos (the recurrence above).
__device__ __forceinline__ void hx_rope_angle(int pos, int i, float thetaScale, float freqScale,
                                              const float* __restrict__ freqFactors, float* s, float* c) {
	float theta = (float)pos;
	for (int j = 0; j < i; j++) theta *= thetaScale;
	if (freqFactors != nullptr) theta /= freqFactors[i];
	theta *= freqScale;
	sincosf(theta, s, c);
}

// hx_rope_at rotates element pair t (of rows·heads·half) of x.
__device__ __forceinline__ void hx_rope_at(float* __restrict__ x, const int* __restrict__ pos, int t, int heads,
                                           int headDim, int half, float thetaScale, float freqScale,
                                           const float* __restrict__ freqFactors, int neox) {
	const int i = t % half, rh = t / half;
	const int h = rh % heads, row = rh / heads;
	float s, c;
	hx_rope_angle(pos[row], i, thetaScale, freqScale, freqFactors, &s, &c);
	float* v = x + ((size_t)row * heads + h) * headDim;
	const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
	const float x0 = v[a], x1 = v[b];
	v[a] = x0 * c - x1 * s;
	v[b] = x0 * s + x1 * c;
}

extern "C" __global__ void hx_rope(float* __restrict__ x, const int* __restrict__ pos, int rows, int heads, int headDim,
                                   int dims, float base, float freqScale, const float* __restrict__ freqFactors,
                                   int neox) {
	hx_grid_wait();
	const int half = dims / 2;
	if (half <= 0) return;
	const float thetaScale = (float)pow((double)base, (double)(-2.0f / (float)dims));
	HX_FOR_N(t, rows * heads * half) {
		hx_rope_at(x, pos, t, heads, headDim, half, thetaScale, freqScale, freqFactors, neox);
	}
}

__device__ __forceinline__ void hx_kv_put(float* p, float v) { *p = v; }
__device__ __forceinline__ void hx_kv_put(unsigned short* p, float v) { *p = hx_f2h(v); }

// hx_rope2_store is hx_rope of q and of k followed by hx_store_kv_* of the rotated k
// and of v (kvDim = kHeads·headDim wide) into slots slot[r] of a layer's
// store, in one launch: the threads that rotate a pair of k also store it,
// and one thread per element of v stores it, with the element of k at the
// same place when it lies past dims (not rotated). N = rows·(qHeads +
// kHeads)·(dims/2) + rows·kvDim.
template <class KV>
__device__ __forceinline__ void hx_rope2_store(KV* __restrict__ kc, KV* __restrict__ vc, float* __restrict__ q,
                                               float* __restrict__ k, const float* __restrict__ v,
                                               const int* __restrict__ pos, const int* __restrict__ slot, int rows,
                                               int qHeads, int kHeads, int headDim, int dims, float base,
                                               float freqScale, const float* __restrict__ freqFactors, int neox) {
	const int half = dims / 2, kvDim = kHeads * headDim;
	const float thetaScale = (float)pow((double)base, (double)(-2.0f / (float)dims));
	const int nq = rows * qHeads * half, nk = rows * kHeads * half;
	HX_FOR_N(t, nq + nk + rows * kvDim) {
		if (t < nq) {
			hx_rope_at(q, pos, t, qHeads, headDim, half, thetaScale, freqScale, freqFactors, neox);
		} else if (t < nq + nk) {
			const int tk = t - nq;
			hx_rope_at(k, pos, tk, kHeads, headDim, half, thetaScale, freqScale, freqFactors, neox);
			const int i = tk % half, rh = tk / half, row = rh / kHeads;
			const size_t in = (size_t)rh * headDim, o = (size_t)slot[row] * kvDim + (size_t)(rh % kHeads) * headDim;
			const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
			hx_kv_put(kc + o + a, k[in + a]);
			hx_kv_put(kc + o + b, k[in + b]);
		} else {
			const int e = t - nq - nk, row = e / kvDim, c = e - row * kvDim;
			const size_t o = (size_t)slot[row] * kvDim + c;
			hx_kv_put(vc + o, v[e]);
			if (c % headDim >= 2 * half) hx_kv_put(kc + o, k[e]); // past the rotated dims
		}
	}
}

extern "C" __global__ void hx_rope2_store_f32(float* kc, float* vc, float* q, float* k, const float* v, const int* pos,
                                              const int* slot, int rows, int qHeads, int kHeads, int headDim, int dims,
                                              float base, float freqScale, const float* freqFactors, int neox) {
	hx_grid_wait();
	hx_rope2_store<float>(kc, vc, q, k, v, pos, slot, rows, qHeads, kHeads, headDim, dims, base, freqScale,
	                      freqFactors, neox);
}

extern "C" __global__ void hx_rope2_store_f16(unsigned short* kc, unsigned short* vc, float* q, float* k,
                                              const float* v, const int* pos, const int* slot, int rows, int qHeads,
                                              int kHeads, int headDim, int dims, float base, float freqScale,
                                              const float* freqFactors, int neox) {
	hx_grid_wait();
	hx_rope2_store<unsigned short>(kc, vc, q, k, v, pos, slot, rows, qHeads, kHeads, headDim, dims, base, freqScale,
	                               freqFactors, neox);
}

// hx_norm_rope2_store is hx_rmsnorm2 of the heads of q (weight qw) and k
// (kw), then hx_rope2_store, in one launch: block b < rows·qHeads takes
// query head b, the next rows·kHeads blocks the key heads, and the last
// rows·kHeads the value heads. A q or k block normalises its head as
// hx_rmsnorm does (thread i holds element i, the same block reduction),
// keeps the normalised head in shared memory, and then thread j < dims/2
// rotates pair j as hx_rope_at does; a k block also stores the rotated
// head in the KV store, a v block stores its head. Grid rows·(qHeads +
// 2·kHeads), block headDim rounded up to a multiple of 32 (headDim ≤ 256).
template <class KV>
__device__ __forceinline__ void hx_norm_rope2_store(KV* __restrict__ kc, KV* __restrict__ vc, float* __restrict__ q,
                                                    float* __restrict__ k, const float* __restrict__ v,
                                                    const float* __restrict__ qw, const float* __restrict__ kw,
                                                    float eps, const int* __restrict__ pos,
                                                    const int* __restrict__ slot, int rows, int qHeads, int kHeads,
                                                    int headDim, int dims, float base, float freqScale,
                                                    const float* __restrict__ freqFactors, int neox) {
	__shared__ float red[32];
	__shared__ float head[256];
	const int b = blockIdx.x, i = threadIdx.x, kvDim = kHeads * headDim;
	const int nq = rows * qHeads, nk = rows * kHeads;
	if (b >= nq + nk) { // a value head: stored as it is
		const int rh = b - nq - nk, row = rh / kHeads;
		const size_t o = (size_t)slot[row] * kvDim + (size_t)(rh % kHeads) * headDim;
		if (i < headDim) hx_kv_put(vc + o + i, v[(size_t)rh * headDim + i]);
		return;
	}
	const bool isQ = b < nq;
	const int rh = isQ ? b : b - nq, heads = isQ ? qHeads : kHeads, row = rh / heads;
	float* x = (isQ ? q : k) + (size_t)rh * headDim;
	const float* w = isQ ? qw : kw;
	float xv = 0.0f, wv = 0.0f;
	if (i < headDim) {
		xv = x[i];
		wv = w[i];
	}
	float sum = 0.0f;
	if (i < headDim) sum += xv * xv;
	sum = hx_block_sum(sum, red);
	const float mean = sum / (float)headDim;
	const float scale = 1.0f / sqrtf(mean + eps);
	if (i < headDim) head[i] = __fmul_rn(xv, scale) * wv;
	__syncthreads();
	const int half = dims / 2;
	const size_t o = isQ ? 0 : (size_t)slot[row] * kvDim + (size_t)(rh % kHeads) * headDim;
	if (i < half) {
		const float thetaScale = (float)pow((double)base, (double)(-2.0f / (float)dims));
		float sn, cs;
		hx_rope_angle(pos[row], i, thetaScale, freqScale, freqFactors, &sn, &cs);
		const int a = neox ? i : 2 * i, c = neox ? i + half : 2 * i + 1;
		const float x0 = head[a], x1 = head[c];
		const float ra = x0 * cs - x1 * sn, rc = x0 * sn + x1 * cs;
		x[a] = ra;
		x[c] = rc;
		if (!isQ) {
			hx_kv_put(kc + o + a, ra);
			hx_kv_put(kc + o + c, rc);
		}
	}
	if (i >= 2 * half && i < headDim) { // past the rotated dims
		x[i] = head[i];
		if (!isQ) hx_kv_put(kc + o + i, head[i]);
	}
}

extern "C" __global__ void hx_norm_rope2_store_f32(float* kc, float* vc, float* q, float* k, const float* v,
                                                   const float* qw, const float* kw, float eps, const int* pos,
                                                   const int* slot, int rows, int qHeads, int kHeads, int headDim,
                                                   int dims, float base, float freqScale, const float* freqFactors,
                                                   int neox) {
	hx_grid_wait();
	hx_norm_rope2_store<float>(kc, vc, q, k, v, qw, kw, eps, pos, slot, rows, qHeads, kHeads, headDim, dims, base,
	                           freqScale, freqFactors, neox);
}

extern "C" __global__ void hx_norm_rope2_store_f16(unsigned short* kc, unsigned short* vc, float* q, float* k,
                                                   const float* v, const float* qw, const float* kw, float eps,
                                                   const int* pos, const int* slot, int rows, int qHeads, int kHeads,
                                                   int headDim, int dims, float base, float freqScale,
                                                   const float* freqFactors, int neox) {
	hx_grid_wait();
	hx_norm_rope2_store<unsigned short>(kc, vc, q, k, v, qw, kw, eps, pos, slot, rows, qHeads, kHeads, headDim, dims,
	                                    base, freqScale, freqFactors, neox);
}

// hx_trap makes a sticky device failure (a test hook). Grid 1, block 1.
extern "C" __global__ void hx_trap() {
	hx_grid_wait(); __trap(); }
