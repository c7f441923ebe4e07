// The operations of recurrent (gated delta-rule) layers: Qwen3.5's linear
// attention. States are per sequence, so the convolution and the delta
// rule are launched once per span of the batch.
#include "common.cuh"

// HX_CONV_MAXK is the widest convolution kernel; HX_DN_MAXD the largest
// head dimension of the delta rule.
#define HX_CONV_MAXK 8
#define HX_DN_MAXD 256

// Causal depthwise convolution of kernel width K over the n rows
// [row0, row0+n) of x (C channels), then SiLU, into out; st holds the K-1
// inputs before the span (oldest first, C wide) and is left holding the
// span's last K-1. w holds K × C taps, oldest first (tap j of channel c at
// j·C+c); taps are summed oldest first from zero. Grid (ceil(C/256)),
// block 256: one thread per channel, walking the span's rows.
extern "C" __global__ void hx_conv_silu(float* __restrict__ out, const float* __restrict__ x,
                                        const float* __restrict__ w, float* __restrict__ st, int row0, int n, int C,
                                        int K) {
	hx_grid_wait();
	const int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C) return;
	if (K < 1 || K - 1 > HX_CONV_MAXK) __trap();
	float win[HX_CONV_MAXK];
	for (int j = 0; j < K - 1; j++) win[j] = st[(size_t)j * C + c];
	for (int t = 0; t < n; t++) {
		const size_t at = (size_t)(row0 + t) * C + c;
		const float xv = x[at];
		float sum = 0.0f;
		for (int j = 0; j < K - 1; j++) sum += win[j] * w[(size_t)j * C + c];
		sum += xv * w[(size_t)(K - 1) * C + c];
		out[at] = sum / (1.0f + expf(-sum));
		for (int j = 0; j + 1 < K - 1; j++) win[j] = win[j + 1];
		if (K > 1) win[K - 2] = xv;
	}
	for (int j = 0; j < K - 1; j++) st[(size_t)j * C + c] = win[j];
}

// L2-normalises, in place, the first heads heads (dim values each) of every
// row of x (width values a row): x / max(|x|, eps). Grid (rows, heads),
// block 32.
extern "C" __global__ void hx_l2norm_heads(float* __restrict__ x, int heads, int dim, int width, float eps) {
	hx_grid_wait();
	if ((int)blockIdx.y >= heads) return;
	float* v = x + (size_t)blockIdx.x * width + (size_t)blockIdx.y * dim;
	float s = 0.0f;
	for (int i = threadIdx.x; i < dim; i += 32) s += v[i] * v[i];
	s = hx_warp_sum(s);
	const float scale = 1.0f / fmaxf(sqrtf(s), eps);
	for (int i = threadIdx.x; i < dim; i += 32) v[i] *= scale;
}

__device__ __forceinline__ float hx_softplus(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

// The gated delta rule over the n rows [row0, row0+n) of one sequence,
// token by token, for value head blockIdx.x: with q and k (already
// L2-normalised) of its key head kq (h % kh, or h / (vh/kh) when grouped),
// decay = exp(softplus(alpha + dtBias[h])·A[h]), beta = sigmoid(beta):
// S ← S·decay, S += beta·(v − S·k)·kᵀ, out = S·q/sqrt(dim). qkv rows hold
// kh query heads, kh key heads and vh value heads of dim values; alpha and
// beta rows vh values; out rows vh·dim. s is the sequence's state, vh
// blocks of dim × dim, row j of head h (S[j][·]) at (h·dim + j)·dim.
// Grid (vh), block 128: thread j advances rows j, j+128, … of S.
extern "C" __global__ void hx_delta_net(float* __restrict__ out, const float* __restrict__ qkv,
                                        const float* __restrict__ alpha, const float* __restrict__ beta,
                                        float* __restrict__ s, const float* __restrict__ dtBias,
                                        const float* __restrict__ A, int row0, int n, int kh, int vh, int dim,
                                        int grouped) {
	hx_grid_wait();
	__shared__ float qs[HX_DN_MAXD], ks[HX_DN_MAXD];
	const int h = blockIdx.x;
	if (h >= vh) return;
	if (dim > HX_DN_MAXD || kh <= 0 || vh % kh != 0) __trap();
	const int kq = grouped ? h / (vh / kh) : h % kh;
	const size_t width = (size_t)(2 * kh + vh) * dim;
	const float scale = 1.0f / sqrtf((float)dim);
	float* sh = s + (size_t)h * dim * dim;
	for (int t = 0; t < n; t++) {
		const size_t r = (size_t)(row0 + t);
		const float* row = qkv + r * width;
		for (int i = threadIdx.x; i < dim; i += blockDim.x) {
			qs[i] = row[(size_t)kq * dim + i];
			ks[i] = row[(size_t)(kh + kq) * dim + i];
		}
		__syncthreads();
		const float decay = expf(hx_softplus(alpha[r * vh + h] + dtBias[h]) * A[h]);
		const float bt = 1.0f / (1.0f + expf(-beta[r * vh + h]));
		for (int j = threadIdx.x; j < dim; j += blockDim.x) {
			float* sj = sh + (size_t)j * dim;
			float sk = 0.0f;
			for (int i = 0; i < dim; i++) {
				sj[i] *= decay;
				sk += sj[i] * ks[i];
			}
			const float dj = (row[(size_t)(2 * kh + h) * dim + j] - sk) * bt;
			float o = 0.0f;
			for (int i = 0; i < dim; i++) {
				sj[i] += dj * ks[i];
				o += sj[i] * qs[i];
			}
			out[r * vh * dim + (size_t)h * dim + j] = o * scale;
		}
		__syncthreads(); // qs and ks are rewritten by the next token
	}
}

// Splits every row of src (rows × heads groups of a+b values) into the
// first a values of each group (da, heads·a wide) and the other b (db).
// Grid ceil(rows·heads·(a+b)/256), block 256.
extern "C" __global__ void hx_split_heads(float* __restrict__ da, float* __restrict__ db, const float* __restrict__ src,
                                          int rows, int heads, int a, int b) {
	hx_grid_wait();
	const size_t g = (size_t)(a + b);
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)rows * heads * g) return;
	const size_t grp = i / g, e = i % g;
	if (e < (size_t)a) {
		da[grp * a + e] = src[i];
	} else {
		db[grp * b + (e - a)] = src[i];
	}
}

// Multiplies x (n values, cols a row) by sigmoid(gate): element by
// element, or each row by its row's gate when gcols is 1. Grid
// ceil(n/256), block 256.
extern "C" __global__ void hx_sigmoid_mul(float* __restrict__ x, const float* __restrict__ gate, int n, int cols,
                                          int gcols) {
	hx_grid_wait();
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const float g = gate[gcols == 1 ? i / cols : i];
	x[i] *= 1.0f / (1.0f + expf(-g));
}
