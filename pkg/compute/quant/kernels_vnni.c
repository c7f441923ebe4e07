//go:build cgo && !purego

// AVX-512 VNNI kernels for the weight types of the common GGUF mixes (Q8_0,
// Q4_K, Q5_K, Q6_K), one weight row times up to HX_VN activation rows. Unlike the
// kernels of kernels.c they are not bit-identical to the Go kernels: the
// integer sums are exact, but the float accumulation runs in vector lanes
// (a different order of additions), so results agree with the portable
// kernels to float rounding (tests bound the difference). Each weight block
// is decoded once into registers and multiplied with every activation row
// with vpdpbusd (unsigned 8-bit weights times signed 8-bit activations).

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"
#include "kernels_il.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels_vnni.h"

#define HX_VN 8
#define HX_AHEAD 4

int hx_vnni(void) {
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
	       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
}

HX_VNNI static inline __m512i hx_load2x32(const uint8_t *a, const uint8_t *b) {
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
	                          _mm256_loadu_si256((const __m256i *)b), 1);
}

// hx_q8_act is one activation row of a Q8_0 matmul laid out for the
// kernel: the values without block headers, made unsigned (x+128), and per
// pair of blocks a vector of their two scales (lanes 0-7, 8-15).
typedef struct {
	uint8_t *q;
	float *d; // 16 floats per pair of blocks
} hx_q8_act;

// Q8_0 (34-byte blocks: fp16 scale, 32 int8) times Q8_0 activations, two
// blocks per step. The activations are stored unsigned (x+128, see
// hx_q8_prepare), so one vpdpbusd per activation row gives Σ(x+128)·w; the
// 128·Σw excess, the same for every activation row, starts the sum
// negated.
HX_VNNI static inline __attribute__((always_inline)) void hx_v_q8_0_body(const uint8_t *w, const hx_q8_act *xa, int nx, int nb, float *out, size_t os) {
	__m512 acc[HX_VN];
	float tail[HX_VN];
	for (int j = 0; j < nx; j++) { acc[j] = _mm512_setzero_ps(); tail[j] = 0; }
	const __m512i zero = _mm512_setzero_si512(), k128 = _mm512_set1_epi8((char)0x80);
	int ib = 0;
	for (; ib + 2 <= nb; ib += 2) {
		const uint8_t *w0 = w + (size_t)ib * 34, *w1 = w0 + 34;
		__m512i wv = hx_load2x32(w0 + 2, w1 + 2);
		__m512i negc = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, k128, wv));
		__m512 dw = _mm512_insertf32x8(_mm512_set1_ps(hx_h2f(w0)), _mm256_set1_ps(hx_h2f(w1)), 1);
		for (int j = 0; j < nx; j++) {
			__m512i s = _mm512_dpbusd_epi32(negc, _mm512_loadu_si512((const void *)(xa[j].q + 32 * ib)), wv);
			__m512 sc = _mm512_mul_ps(dw, _mm512_loadu_ps(xa[j].d + 8 * ib));
			acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc[j]);
		}
	}
	for (; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 34;
		// intrinsics, not a scalar loop: GCC 12 auto-vectorizes an int8
		// product loop under this target into a wrong unsigned VNNI sum
		__m256i wv = _mm256_loadu_si256((const __m256i *)(wb + 2));
		__mmask32 neg = _mm256_movepi8_mask(wv);
		__m256i wa = _mm256_abs_epi8(wv);
		for (int j = 0; j < nx; j++) {
			__m256i xv = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(xa[j].q + 32 * ib)), _mm256_set1_epi8((char)0x80));
			__m256i xs = _mm256_mask_sub_epi8(xv, neg, _mm256_setzero_si256(), xv);
			__m256i s8 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), wa, xs);
			__m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
			s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
			s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
			tail[j] += (float)_mm_cvtsi128_si32(s4) * (hx_h2f(wb) * xa[j].d[8 * ib]);
		}
	}
	for (int j = 0; j < nx; j++) out[(size_t)j * os] = _mm512_reduce_add_ps(acc[j]) + tail[j];
}

HX_VNNI static void hx_v_q8_0(const uint8_t *w, const hx_q8_act *xa, int nx, int nb, float *out, size_t os) {
	if (nx == HX_VN) hx_v_q8_0_body(w, xa, HX_VN, nb, out, os);
	else if (nx == 1) hx_v_q8_0_body(w, xa, 1, nb, out, os);
	else hx_v_q8_0_body(w, xa, nx, nb, out, os);
}

// hx_q8_prepare lays out nx activation rows of nb Q8_0 blocks for hx_v_q8_0
// in buf (nx * (32*nb + 64 + 32*nb + 64) bytes).
HX_VNNI static void hx_q8_prepare(const uint8_t *x, size_t xs, int nx, int nb, uint8_t *buf, hx_q8_act *xa) {
	for (int j = 0; j < nx; j++) {
		xa[j].q = buf;
		buf += 32 * (size_t)nb + 64;
		xa[j].d = (float *)buf;
		buf += 32 * (size_t)nb + 64;
		for (int ib = 0; ib < nb; ib++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 34;
			_mm256_storeu_si256((__m256i *)(xa[j].q + 32 * ib),
			                    _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(xb + 2)), _mm256_set1_epi8((char)0x80)));
			float d = hx_h2f(xb);
			// the pair layout: block ib's scale in lanes (ib%2)*8 .. +7 of pair ib/2
			for (int k = 0; k < 8; k++) xa[j].d[16 * (ib / 2) + 8 * (ib % 2) + k] = d;
		}
	}
}

// Q4_K (144-byte blocks of 256; Q5_K: 176 bytes with a fifth bit per value
// in 32 bytes of qh) times Q8_K activations (292 bytes: float
// scale, 256 int8, 16 int16 sums of 16). Chunk c of 32 weight bytes holds
// sub-block 2c in its low nibbles and 2c+1 in its high ones, which line up
// with 64 consecutive activation bytes: vpmaddubsw makes 16-bit pair sums,
// vpdpwssd multiplies them by the sub-block scale and accumulates.
HX_VNNI static inline __attribute__((always_inline)) void hx_v_q4_k_body(const uint8_t *w0, size_t rb, int nr, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os, int q5) {
	__m512 acc[HX_VK]; // the mins' term is subtracted in lanes 0-7 (fewer registers than a second accumulator)
	for (int j = 0; j < nr * nx; j++) acc[j] = _mm512_setzero_ps();
	const __m256i mdup = _mm256_setr_epi16(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
	const int bsz = q5 ? 176 : 144, qoff = q5 ? 48 : 16;
	for (int i = 0; i < nb; i++)
	for (int r = 0; r < nr; r++) {
		const uint8_t *wb = w0 + (size_t)r * rb + (size_t)i * bsz;
		__m256i sm = _mm256_cvtepu8_epi16(hx_k4_scales(wb + 4)); // 8 scales, 8 mins as int16
		__m512i sm512 = _mm512_castsi256_si512(sm);
		__m512i q[4], s[4];
		__m256i qh = q5 ? _mm256_loadu_si256((const __m256i *)(wb + 16)) : _mm256_setzero_si256();
		for (int c = 0; c < 4; c++) {
			__m256i lo, hi;
			hx_k4_chunk(wb + qoff + 32 * c, qh, c, q5, &lo, &hi);
			q[c] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
			__m512i idx = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)(2 * c))),
			                                 _mm256_set1_epi16((short)(2 * c + 1)), 1);
			s[c] = _mm512_permutexvar_epi16(idx, sm512);
		}
		__m256i mins = _mm256_permutexvar_epi16(mdup, sm);
		float d = hx_h2f(wb), dmin = hx_h2f(wb + 2);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 292;
			const uint8_t *xq = xb + 4;
			__m512i t = _mm512_setzero_si512();
			for (int c = 0; c < 4; c++)
				t = _mm512_dpwssd_epi32(t, _mm512_maddubs_epi16(q[c], _mm512_loadu_si512((const void *)(xq + 64 * c))), s[c]);
			float dy; memcpy(&dy, xb, 4);
			acc[r * nx + j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps(d * dy), acc[r * nx + j]);
			__m256i m = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(xb + 260)), mins);
			acc[r * nx + j] = _mm512_fnmadd_ps(_mm512_zextps256_ps512(_mm256_cvtepi32_ps(m)), _mm512_set1_ps(dmin * dy), acc[r * nx + j]);
		}
	}
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nx; j++) out[(size_t)j * os + r] = _mm512_reduce_add_ps(acc[r * nx + j]);
}

// Q6_K (210-byte blocks of 256: 128 low-nibble bytes, 64 bytes of high
// bits, 16 int8 scales, fp16 d) times Q8_K activations. The 6-bit values
// are used unsigned (q, not q-32); the 32·Σx excess of each group of 16 is
// removed with the activation block's sums.
HX_VNNI static inline __attribute__((always_inline)) void hx_v_q6_k_body(const uint8_t *w0, size_t rb, int nr, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	__m512 acc[HX_VK];
	for (int j = 0; j < nr * nx; j++) acc[j] = _mm512_setzero_ps();
	const __m512i lo4 = _mm512_set1_epi8(0x0F), three = _mm512_set1_epi8(3);
	for (int i = 0; i < nb; i++)
	for (int r = 0; r < nr; r++) {
		const uint8_t *wb = w0 + (size_t)r * rb + (size_t)i * 210;
		__m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + 192)));
		__m512i sc512 = _mm512_castsi256_si512(sc16);
		__m512i q[4], s[4];
		for (int h = 0; h < 2; h++) {
			__m512i l = _mm512_loadu_si512((const void *)(wb + 64 * h));
			__m256i qh = _mm256_loadu_si256((const __m256i *)(wb + 128 + 32 * h));
			__m512i hb = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
			// values 128h+0..63: low nibbles with bits 0-1 (first 32) / 2-3 (next 32) of qh
			q[2 * h] = _mm512_or_si512(_mm512_and_si512(l, lo4), _mm512_slli_epi16(_mm512_and_si512(hb, three), 4));
			// values +64..127: high nibbles with bits 4-5 / 6-7
			q[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), lo4),
			                               _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hb, 4), three), 4));
		}
		for (int c = 0; c < 4; c++) {
			// int16 pair lane k of chunk c belongs to group 4c + k/8
			__m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0x00010001, 0x00010001, 0x00010001, 0x00010001,
			                                0x00020002, 0x00020002, 0x00020002, 0x00020002, 0x00030003, 0x00030003, 0x00030003, 0x00030003);
			idx = _mm512_add_epi16(idx, _mm512_set1_epi16((short)(4 * c)));
			s[c] = _mm512_permutexvar_epi16(idx, sc512);
		}
		float d = hx_h2f(wb + 208);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 292;
			const uint8_t *xq = xb + 4;
			__m512i t = _mm512_setzero_si512();
			for (int c = 0; c < 4; c++)
				t = _mm512_dpwssd_epi32(t, _mm512_maddubs_epi16(q[c], _mm512_loadu_si512((const void *)(xq + 64 * c))), s[c]);
			// Σ_g scale_g · 32 · bsum_g
			__m256i m = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(xb + 260)), sc16);
			t = _mm512_sub_epi32(t, _mm512_castsi256_si512(_mm256_slli_epi32(m, 5)));
			float dy; memcpy(&dy, xb, 4);
			acc[r * nx + j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps(d * dy), acc[r * nx + j]);
		}
	}
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nx; j++) out[(size_t)j * os + r] = _mm512_reduce_add_ps(acc[r * nx + j]);
}

// hx_quantize_q8k quantizes n floats (a multiple of 256) to Q8_K blocks
// exactly as quantizeQ8K does: the scale from the first element of largest
// magnitude, round half to even (the magic-number trick's rounding), the
// sums of 16. Byte-identical to the Go code.
HX_VNNI static void hx_quantize_q8k_simd(const float *x, int n, uint8_t *dst) {
	const __m512 signbit = _mm512_set1_ps(-0.0f);
	for (int i = 0; i < n / 256; i++, x += 256, dst += 292) {
		__m512 am = _mm512_setzero_ps();
		for (int k = 0; k < 256; k += 16) am = _mm512_max_ps(am, _mm512_andnot_ps(signbit, _mm512_loadu_ps(x + k)));
		float amax = _mm512_reduce_max_ps(am);
		if (amax == 0) { memset(dst, 0, 292); continue; }
		float mx = 0;
		for (int k = 0; k < 256; k += 16) {
			__mmask16 hit = _mm512_cmp_ps_mask(_mm512_andnot_ps(signbit, _mm512_loadu_ps(x + k)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
			if (hit) { mx = x[k + __builtin_ctz(hit)]; break; }
		}
		float iscale = -127 / mx;
		__m512 is = _mm512_set1_ps(iscale), top = _mm512_set1_ps(127);
		int8_t *q = (int8_t *)(dst + 4);
		for (int k = 0; k < 256; k += 16) {
			__m512 v = _mm512_roundscale_ps(_mm512_mul_ps(is, _mm512_loadu_ps(x + k)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
			__m512i qi = _mm512_cvtps_epi32(_mm512_min_ps(v, top));
			_mm_storeu_si128((__m128i *)(q + k), _mm512_cvtsepi32_epi8(qi));
			int32_t s = _mm512_reduce_add_epi32(qi);
			int16_t s16 = (int16_t)s;
			memcpy(dst + 260 + 2 * (k / 16), &s16, 2);
		}
		float d = 1 / iscale;
		memcpy(dst, &d, 4);
	}
}

void hx_quantize_q8k(const float *x, int n, uint8_t *dst) { hx_quantize_q8k_simd(x, n, dst); }

// hx_quantize_q8_0 quantizes n floats (a multiple of 32) to Q8_0 blocks
// exactly as quantizeQ8_0Act does (scale amax/127 stored as fp16, values
// round(x·127/amax) half to even, saturated). Byte-identical to the Go code.
HX_VNNI static void hx_quantize_q8_0_simd(const float *x, int n, uint8_t *dst) {
	const __m512 signbit = _mm512_set1_ps(-0.0f);
	for (int i = 0; i < n / 32; i++, x += 32, dst += 34) {
		__m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
		float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_andnot_ps(signbit, a), _mm512_andnot_ps(signbit, b)));
		uint16_t h = _cvtss_sh(amax / 127, _MM_FROUND_TO_NEAREST_INT);
		memcpy(dst, &h, 2);
		__m512 id = _mm512_set1_ps(amax != 0 ? 127 / amax : 0);
		__m512i qa = _mm512_cvtps_epi32(_mm512_roundscale_ps(_mm512_mul_ps(a, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
		__m512i qb = _mm512_cvtps_epi32(_mm512_roundscale_ps(_mm512_mul_ps(b, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
		_mm_storeu_si128((__m128i *)(dst + 2), _mm512_cvtsepi32_epi8(qa));
		_mm_storeu_si128((__m128i *)(dst + 18), _mm512_cvtsepi32_epi8(qb));
	}
}

void hx_quantize_q8_0(const float *x, int n, uint8_t *dst) { hx_quantize_q8_0_simd(x, n, dst); }

// The kernels for a full tile of HX_VK activation rows (prefill), for
// HX_VN (eight batched streams) and for decode (one activation row), each
// count known at compile time so the accumulators stay in registers, and
// for any count.
#define HX_KFN(name, body, ...) \
	HX_VNNI static void name(const uint8_t *w, size_t rb, int nr, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) { \
		if (nx == HX_VK) body(w, rb, 1, x, xs, HX_VK, nb, out, os __VA_ARGS__); \
		else if (nx == HX_VN) body(w, rb, 1, x, xs, HX_VN, nb, out, os __VA_ARGS__); \
		else if (nx == 1) body(w, rb, 1, x, xs, 1, nb, out, os __VA_ARGS__); \
		else body(w, rb, 1, x, xs, nx, nb, out, os __VA_ARGS__); \
	}
HX_KFN(hx_v_q4_k, hx_v_q4_k_body, , 0)
HX_KFN(hx_v_q5_k, hx_v_q4_k_body, , 1)
HX_KFN(hx_v_q6_k, hx_v_q6_k_body)

int hx_vnni_supports(int type) { return type == HX_Q8_0 || type == HX_Q4_K || type == HX_Q5_K || type == HX_Q6_K; }

HX_VNNI void hx_vnni_q8_0(const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int nb,
                                 float *out, size_t os) {
	size_t per = 2 * (32 * (size_t)nb + 64);
	uint8_t *buf = malloc(per * HX_VN);
	if (!buf) {
		for (int j = 0; j < nx; j++)
			for (int r = 0; r < nrows; r++) out[(size_t)j * os + r] = __builtin_nanf("");
		return;
	}
	hx_q8_act xa[HX_VN];
	for (int j0 = 0; j0 < nx; j0 += HX_VN) {
		int g = nx - j0 < HX_VN ? nx - j0 : HX_VN;
		hx_q8_prepare(x + (size_t)j0 * xs, xs, g, nb, buf, xa);
		for (int r = 0; r < nrows; r++) {
			// batched decode prefetches ahead; one row (decode) streams
			// faster without (1024-8192 columns, one thread)
			if (nx > 1 && nx <= HX_VN && r + HX_AHEAD < nrows) hx_prefetch_lines(w + (size_t)(r + HX_AHEAD) * rb, rb);
			hx_v_q8_0(w + (size_t)r * rb, xa, g, nb, out + (size_t)j0 * os + r, os);
		}
	}
	free(buf);
}

void hx_vnni_rows(int type, const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int n,
                  float *out, size_t os) {
	hx_vfn fn;
	int nb;
	switch (type) {
	case HX_Q8_0:
		if (nx >= HX_IL8_MIN && nrows >= HX_IL && hx_il8_rows(w, rb, NULL, 0, nrows, x, xs, nx, n / 32, out, os)) return;
		hx_vnni_q8_0(w, rb, nrows, x, xs, nx, n / 32, out, os);
		return;
	case HX_Q4_K: fn = hx_v_q4_k; nb = n / 256; break;
	case HX_Q5_K: fn = hx_v_q5_k; nb = n / 256; break;
	case HX_Q6_K: fn = hx_v_q6_k; nb = n / 256; break;
	default: return;
	}
	if (nx >= HX_IL_MIN && nrows >= HX_IL && hx_il_rows(type, fn, w, rb, NULL, 0, nrows, x, xs, nx, nb, out, os))
		return;
	if (nx == 1) {
		// decode streams the weights once, row after row (the hardware
		// prefetchers follow); multiplying four rows per call with explicit
		// prefetches measured 1.4-2.2x slower here
		for (int r = 0; r < nrows; r++) fn(w + (size_t)r * rb, rb, 1, x, xs, 1, nb, out + r, os);
		return;
	}
	for (int j0 = 0; j0 < nx; j0 += HX_VK) {
		int g = nx - j0 < HX_VK ? nx - j0 : HX_VK;
		for (int r = 0; r < nrows; r++) {
			// one tile (batched decode) streams the weights from memory once;
			// more (prefill) re-read them from cache
			if (nx <= HX_VK && r + HX_AHEAD < nrows) hx_prefetch_lines(w + (size_t)(r + HX_AHEAD) * rb, rb);
			fn(w + (size_t)r * rb, rb, 1, x + (size_t)j0 * xs, xs, g, nb, out + (size_t)j0 * os + r, os);
		}
	}
}

#else
int hx_vnni(void) { return 0; }
void hx_quantize_q8k(const float *x, int n, uint8_t *dst) { (void)x; (void)n; (void)dst; }
void hx_quantize_q8_0(const float *x, int n, uint8_t *dst) { (void)x; (void)n; (void)dst; }

int hx_vnni_supports(int type) { (void)type; return 0; }
void hx_vnni_rows(int type, const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int n,
                  float *out, size_t os) {
	(void)type; (void)w; (void)rb; (void)nrows; (void)x; (void)xs; (void)nx; (void)n; (void)out; (void)os;
}
#endif
