// Attention over a paged KV store (one layer), F32 or F16 keys and values.
#include "common.cuh"

// HX_ATT_WARPS is the warps of an attention block (block 128), each taking
// a share of the positions; HX_ATT_CHUNK the positions a warp scores at
// once (independent reductions in flight).
#define HX_ATT_WARPS 4
#define HX_ATT_CHUNK 4
// HX_ATT_MAXD is the largest head dimension.
#define HX_ATT_MAXD 256

__device__ __forceinline__ float hx_kv_at(const float* p) { return *p; }
__device__ __forceinline__ float hx_kv_at(const unsigned short* p) { return hx_h2f(*p); }

// hx_merge_head combines the splits of (row r, head h) in part (see
// hx_attend): out = Σ_z e^(m_z − m)·acc_z / Σ_z e^(m_z − m)·l_z (splits
// without positions add nothing; no positions at all give zeros). part is
// read past the L1 cache (__ldcg): other blocks wrote it during this
// launch.
__device__ __forceinline__ void hx_merge_head(float* __restrict__ out, const float* part, int r, int h, int heads, int D,
                                              int splits) {
	const float* pp = part + ((size_t)r * heads + h) * splits * (D + 2);
	float mx = -INFINITY;
	for (int z = 0; z < splits; z++) mx = fmaxf(mx, __ldcg(pp + (size_t)z * (D + 2)));
	float den = 0.0f;
	for (int z = 0; z < splits; z++) {
		const float m = __ldcg(pp + (size_t)z * (D + 2));
		if (m != -INFINITY) den += expf(m - mx) * __ldcg(pp + (size_t)z * (D + 2) + 1);
	}
	const float inv = den > 0.0f ? 1.0f / den : 0.0f;
	float* o = out + ((size_t)r * heads + h) * D;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float v = 0.0f;
		for (int z = 0; z < splits; z++) {
			const float m = __ldcg(pp + (size_t)z * (D + 2));
			if (m != -INFINITY) v += expf(m - mx) * __ldcg(pp + (size_t)z * (D + 2) + 2 + i);
		}
		o[i] = v * inv;
	}
}

// hx_last_split reports, in every thread of the block, whether the block
// is the last of splits blocks to count itself in *count (after the
// writes of all of them are visible); the last sets *count back to 0 for
// the next launch.
__device__ __forceinline__ bool hx_last_split(int* count, int splits) {
	__shared__ int last;
	__threadfence(); // this block's partial result before its count
	__syncthreads();
	if (threadIdx.x == 0) {
		last = atomicAdd(count, 1) == splits - 1;
		if (last) *count = 0;
	}
	__syncthreads();
	if (last) __threadfence();
	return last;
}

// hx_att_span leaves in *first and *last the positions block (r, h[, z])
// attends: row r's [rowFirst[r], rowPos[r]], and with a split (chunk > 0)
// only the z-th chunk of them (empty when the row is shorter).
__device__ __forceinline__ void hx_att_span(const int* __restrict__ rowPos, const int* __restrict__ rowFirst, int r,
                                            int chunk, int* first, int* last) {
	*first = rowFirst[r];
	*last = rowPos[r];
	if (chunk > 0) {
		*first += (int)blockIdx.z * chunk;
		if (*first + chunk - 1 < *last) *last = *first + chunk - 1;
	}
}

// hx_kv_row is the cache row holding position p of a block table.
__device__ __forceinline__ size_t hx_kv_row(const int* __restrict__ table, int p, int blockSize) {
	return (size_t)table[p / blockSize] * blockSize + p % blockSize;
}

// hx_attend is the body of the attention kernels for head dimension D,
// 32·(NK−1) < D ≤ 32·NK. Block (r, h) computes query row r, head h: the
// positions p of [rowFirst[r], rowPos[r]] are shared out to the warps in
// chunks of HX_ATT_CHUNK (warp w takes chunks w, w+4, …); lane l holds
// elements l + 32k (those below D) of the head. Each warp keeps an online softmax
// (running max m, sum l, weighted values acc), and the warps' partial
// results are combined through shared memory sh (HX_ATT_WARPS·(MAXD+2)
// floats).
//
// With part set (split decode), block (r, h, z) takes only the chunk
// positions from rowFirst[r] + z·chunk and writes its partial result to
// part (splits × (D+2) floats per (row, head): max, sum, unnormalised
// weighted values); the last of the splits of (r, h) to finish, as
// counted in counts[r·heads + h] (which it sets back to 0), merges them
// into out (hx_merge_head).
template <class KV, int NK>
__device__ __forceinline__ void hx_attend(float* __restrict__ out, float* part, int* counts, int chunk, int splits,
                                          const float* __restrict__ q, const KV* __restrict__ kc,
                                          const KV* __restrict__ vc, const int* __restrict__ rowPos,
                                          const int* __restrict__ rowFirst, const int* __restrict__ rowTable,
                                          const int* __restrict__ tables, int heads, int kvHeads, int D,
                                          int blockSize, float scale, float* sh) {
	const int r = blockIdx.x, h = blockIdx.y;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int first, last;
	hx_att_span(rowPos, rowFirst, r, part != nullptr ? chunk : 0, &first, &last);
	const int* table = tables + rowTable[r];
	const size_t kvDim = (size_t)kvHeads * D;
	const size_t kvOff = (size_t)(h / (heads / kvHeads)) * D + lane;
	const float* qh = q + ((size_t)r * heads + h) * D + lane;

	// the lane's elements past D (D not a multiple of 32) count as zeros
	const int nk = (D - lane + 31) / 32; // elements this lane holds
	float qv[NK], acc[NK];
#pragma unroll
	for (int k = 0; k < NK; k++) {
		qv[k] = k < nk ? qh[32 * k] : 0.0f;
		acc[k] = 0.0f;
	}
	float m = -INFINITY, l = 0.0f;
	for (int p0 = first + warp * HX_ATT_CHUNK; p0 <= last; p0 += HX_ATT_WARPS * HX_ATT_CHUNK) {
		float s[HX_ATT_CHUNK];
		size_t off[HX_ATT_CHUNK];
#pragma unroll
		for (int t = 0; t < HX_ATT_CHUNK; t++) {
			const int p = p0 + t;
			s[t] = 0.0f;
			off[t] = 0;
			if (p <= last) {
				off[t] = hx_kv_row(table, p, blockSize) * kvDim + kvOff;
				const KV* kp = kc + off[t];
#pragma unroll
				for (int k = 0; k < NK; k++) {
					if (k < nk) s[t] += qv[k] * hx_kv_at(kp + 32 * k);
				}
			}
		}
		// every lane reduces every score: the shuffles stay full-warp
#pragma unroll
		for (int t = 0; t < HX_ATT_CHUNK; t++) s[t] = hx_warp_sum(s[t]);
		float mNew = m;
#pragma unroll
		for (int t = 0; t < HX_ATT_CHUNK; t++) {
			s[t] = p0 + t <= last ? s[t] * scale : -INFINITY;
			mNew = fmaxf(mNew, s[t]);
		}
		const float corr = expf(m - mNew); // 0 for the first chunk (m = −inf)
		l *= corr;
#pragma unroll
		for (int k = 0; k < NK; k++) acc[k] *= corr;
#pragma unroll
		for (int t = 0; t < HX_ATT_CHUNK; t++) {
			if (p0 + t > last) continue;
			const float e = expf(s[t] - mNew);
			l += e;
			const KV* vp = vc + off[t];
#pragma unroll
			for (int k = 0; k < NK; k++) {
				if (k < nk) acc[k] += e * hx_kv_at(vp + 32 * k);
			}
		}
		m = mNew;
	}

	float* shM = sh;                     // [HX_ATT_WARPS]
	float* shL = sh + HX_ATT_WARPS;      // [HX_ATT_WARPS]
	float* shAcc = sh + 2 * HX_ATT_WARPS; // [HX_ATT_WARPS][D]
#pragma unroll
	for (int k = 0; k < NK; k++) {
		if (k < nk) shAcc[warp * D + lane + 32 * k] = acc[k];
	}
	if (lane == 0) {
		shM[warp] = m;
		shL[warp] = l;
	}
	__syncthreads();
	float mx = -INFINITY;
#pragma unroll
	for (int w = 0; w < HX_ATT_WARPS; w++) mx = fmaxf(mx, shM[w]);
	float f[HX_ATT_WARPS], sum = 0.0f;
#pragma unroll
	for (int w = 0; w < HX_ATT_WARPS; w++) {
		f[w] = shM[w] == -INFINITY ? 0.0f : expf(shM[w] - mx); // a warp without positions adds nothing
		sum += f[w] * shL[w];
	}
	if (part != nullptr) {
		float* pp = part + (((size_t)r * heads + h) * splits + blockIdx.z) * (D + 2);
		if (threadIdx.x == 0) {
			pp[0] = mx;
			pp[1] = sum;
		}
		for (int i = threadIdx.x; i < D; i += blockDim.x) {
			float v = 0.0f;
#pragma unroll
			for (int w = 0; w < HX_ATT_WARPS; w++) v += f[w] * shAcc[w * D + i];
			pp[2 + i] = v;
		}
		if (hx_last_split(counts + (size_t)r * heads + h, splits)) hx_merge_head(out, part, r, h, heads, D, splits);
		return;
	}
	const float inv = sum > 0.0f ? 1.0f / sum : 0.0f; // no positions at all: zeros
	float* o = out + ((size_t)r * heads + h) * D;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float v = 0.0f;
#pragma unroll
		for (int w = 0; w < HX_ATT_WARPS; w++) v += f[w] * shAcc[w * D + i];
		o[i] = v * inv;
	}
}

// HX_ATT_PREFETCH is the most positions of a block whose key and value
// rows hx_kv_prefetch fetches.
#define HX_ATT_PREFETCH 64

// hx_kv_prefetch asks for the key and value rows (of head h's KV head) of
// the first HX_ATT_PREFETCH positions block (r, h[, z]) attends in the L2
// cache, a thread per 128-byte line, before the kernel's hx_grid_wait:
// found from the positions and block tables, which the host uploads before
// the launch, they are fetched while the kernel before it still runs (a row
// that kernel writes, the newest position's, is simply fetched again).
// chunk is the split kernel's (0: no split). sm_90 and later.
template <class KV>
__device__ __forceinline__ void hx_kv_prefetch(const KV* kc, const KV* vc, const int* rowPos, const int* rowFirst,
                                               const int* rowTable, const int* tables, int chunk, int heads,
                                               int kvHeads, int D, int blockSize) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	const int r = blockIdx.x, h = blockIdx.y;
	int first, last;
	hx_att_span(rowPos, rowFirst, r, chunk, &first, &last);
	if (first + HX_ATT_PREFETCH - 1 < last) last = first + HX_ATT_PREFETCH - 1;
	const int lines = (D * (int)sizeof(KV) + 127) / 128, n = (last - first + 1) * lines;
	const int* table = tables + rowTable[r];
	const size_t kvDim = (size_t)kvHeads * D, kvOff = (size_t)(h / (heads / kvHeads)) * D;
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		const int p = first + i / lines, l = i % lines;
		const size_t off = hx_kv_row(table, p, blockSize) * kvDim + kvOff;
		const char* kp = (const char*)(kc + off) + 128 * l;
		const char* vp = (const char*)(vc + off) + 128 * l;
		asm volatile("prefetch.global.L2 [%0];" ::"l"(kp));
		asm volatile("prefetch.global.L2 [%0];" ::"l"(vp));
	}
#else
	(void)kc, (void)vc, (void)rowPos, (void)rowFirst, (void)rowTable, (void)tables, (void)chunk, (void)heads,
	    (void)kvHeads, (void)D, (void)blockSize;
#endif
}

// hx_attention dispatches on the head dimension (at most 256; a larger or
// non-positive one traps, as do kvHeads not dividing heads).
template <class KV>
__device__ __forceinline__ void hx_attention(float* out, float* part, int* counts, int chunk, int splits, const float* q,
                                             const KV* kc,
                                             const KV* vc, const int* rowPos, const int* rowFirst, const int* rowTable,
                                             const int* tables, int heads, int kvHeads, int headDim, int blockSize,
                                             float scale, float* sh) {
	if ((int)blockIdx.y >= heads) return;
	if (headDim <= 0 || headDim > HX_ATT_MAXD || kvHeads <= 0 || heads % kvHeads != 0) __trap();
	hx_kv_prefetch<KV>(kc, vc, rowPos, rowFirst, rowTable, tables, part != nullptr ? chunk : 0, heads, kvHeads, headDim,
	                   blockSize);
	hx_grid_wait();
#define HX_ATT_CASE(NK)                                                                                               \
	case NK:                                                                                                          \
		hx_attend<KV, NK>(out, part, counts, chunk, splits, q, kc, vc, rowPos, rowFirst, rowTable, tables, heads, kvHeads,     \
		                  headDim, blockSize, scale, sh);                                                            \
		break;
	switch ((headDim + 31) / 32) {
		HX_ATT_CASE(1)
		HX_ATT_CASE(2)
		HX_ATT_CASE(3)
		HX_ATT_CASE(4)
		HX_ATT_CASE(5)
		HX_ATT_CASE(6)
		HX_ATT_CASE(7)
		HX_ATT_CASE(8)
	}
#undef HX_ATT_CASE
}

// Causal attention of query rows over one layer of a paged KV store (kc,
// vc: the layer's [NumBlocks·BlockSize][kvHeads·headDim] keys and values).
// Query row r (heads × headDim values of q; out the same) attends the
// positions p in [rowFirst[r], rowPos[r]]; position p lives at slot
// tables[rowTable[r] + p/blockSize]·blockSize + p%blockSize; head h reads KV
// head h/(heads/kvHeads). Scores scale·(q·k), softmax in F32 with the max
// subtracted, out = Σ softmax·v. headDim ≤ 256 (fastest a multiple of
// 32). Grid (rows, heads), block 128.
extern "C" __global__ void hx_attention_f32(float* __restrict__ out, const float* __restrict__ q,
                                            const float* __restrict__ kc, const float* __restrict__ vc,
                                            const int* __restrict__ rowPos, const int* __restrict__ rowFirst,
                                            const int* __restrict__ rowTable, const int* __restrict__ tables, int heads,
                                            int kvHeads, int headDim, int blockSize, float scale) {
	__shared__ float sh[HX_ATT_WARPS * (HX_ATT_MAXD + 2)];
	hx_attention<float>(out, nullptr, nullptr, 0, 1, q, kc, vc, rowPos, rowFirst, rowTable, tables, heads, kvHeads, headDim,
	                    blockSize, scale, sh);
}

// hx_attention_f32 over an F16 store.
extern "C" __global__ void hx_attention_f16(float* __restrict__ out, const float* __restrict__ q,
                                            const unsigned short* __restrict__ kc,
                                            const unsigned short* __restrict__ vc, const int* __restrict__ rowPos,
                                            const int* __restrict__ rowFirst, const int* __restrict__ rowTable,
                                            const int* __restrict__ tables, int heads, int kvHeads, int headDim,
                                            int blockSize, float scale) {
	__shared__ float sh[HX_ATT_WARPS * (HX_ATT_MAXD + 2)];
	hx_attention<unsigned short>(out, nullptr, nullptr, 0, 1, q, kc, vc, rowPos, rowFirst, rowTable, tables, heads, kvHeads,
	                             headDim, blockSize, scale, sh);
}

// Split decode attention (few rows, long contexts): hx_attention_part_* is
// hx_attention_* where block (r, h, z) of grid (rows, heads, splits) takes
// the chunk positions from rowFirst[r] + z·chunk and writes its partial
// softmax to part (rows × heads × splits × (headDim+2) floats: max, sum,
// unnormalised weighted values); the last split of each (row, head) to
// finish merges them into out. counts holds rows × heads zeros, and does
// again after the launch. Block 128.
extern "C" __global__ void hx_attention_part_f32(float* __restrict__ out, float* part, int* counts,
                                                 const float* __restrict__ q, const float* __restrict__ kc,
                                                 const float* __restrict__ vc, const int* __restrict__ rowPos,
                                                 const int* __restrict__ rowFirst, const int* __restrict__ rowTable,
                                                 const int* __restrict__ tables, int heads, int kvHeads, int headDim,
                                                 int blockSize, float scale, int chunk, int splits) {
	__shared__ float sh[HX_ATT_WARPS * (HX_ATT_MAXD + 2)];
	if (chunk <= 0 || splits <= 0) __trap();
	hx_attention<float>(out, part, counts, chunk, splits, q, kc, vc, rowPos, rowFirst, rowTable, tables, heads, kvHeads,
	                    headDim, blockSize, scale, sh);
}

// hx_attention_part_f32 over an F16 store.
extern "C" __global__ void hx_attention_part_f16(float* __restrict__ out, float* part, int* counts,
                                                 const float* __restrict__ q, const unsigned short* __restrict__ kc,
                                                 const unsigned short* __restrict__ vc, const int* __restrict__ rowPos,
                                                 const int* __restrict__ rowFirst, const int* __restrict__ rowTable,
                                                 const int* __restrict__ tables, int heads, int kvHeads, int headDim,
                                                 int blockSize, float scale, int chunk, int splits) {
	__shared__ float sh[HX_ATT_WARPS * (HX_ATT_MAXD + 2)];
	if (chunk <= 0 || splits <= 0) __trap();
	hx_attention<unsigned short>(out, part, counts, chunk, splits, q, kc, vc, rowPos, rowFirst, rowTable, tables, heads,
	                             kvHeads, headDim, blockSize, scale, sh);
}
