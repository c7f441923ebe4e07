//go:build cgo && !purego

// Multi-activation kernels: one range of weight rows times several
// activation rows (prefill). Each weight block is decoded once and dotted
// with up to HX_NX activation rows, each into its own accumulators, with
// exactly the integer sums and float operations (same order) of the one-row
// kernels of kernels.c, so every output is bit-identical to hx_dot_rows.
// Types without a multi kernel here (Q4_1, Q5_0, Q5_1, float), and a lone
// activation row, run hx_dot_rows once per activation row.

#include "kernels_common.h"
#include "kernels.h"

#define HX_NX 8

typedef void (*hx_multi_fn)(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os);

// hx_k_bsize is the byte size of one block of K-quant kind (2..6).
static inline int hx_k_bsize(int kind) {
	switch (kind) {
	case 2: return 84;
	case 3: return 110;
	case 4: return 144;
	case 5: return 176;
	default: return 210;
	}
}

// hx_unpack_k decodes one K-quant block into the 256 small integers a,
// the 16 sub-block scales and (Q4_K, Q5_K) the 8 mins, as the one-row
// kernels do.
static inline void hx_unpack_k(int kind, const uint8_t *wb, int8_t *a, int32_t *scales, int32_t *mn) {
	if (kind == 2) {
		for (int j = 0; j < 16; j++) scales[j] = wb[j] & 0xF;
		for (int n = 0; n < 2; n++)
			for (int g = 0; g < 4; g++)
				for (int l = 0; l < 32; l++)
					a[128 * n + 32 * g + l] = (int8_t)((wb[16 + 32 * n + l] >> (2 * g)) & 3);
	} else if (kind == 3) {
		for (int n = 0; n < 2; n++)
			for (int g = 0; g < 4; g++) {
				uint8_t m = (uint8_t)(1u << (4 * n + g));
				for (int l = 0; l < 32; l++) {
					int8_t v = (int8_t)((wb[32 + 32 * n + l] >> (2 * g)) & 3);
					a[128 * n + 32 * g + l] = (int8_t)(v - ((wb[l] & m) ? 0 : 4));
				}
			}
		hx_q3_scales(wb + 96, scales);
	} else if (kind == 4 || kind == 5) {
		const int q5 = kind == 5, qoff = q5 ? 48 : 16;
		for (int j = 0; j < 4; j++) {
			const uint8_t *q = wb + qoff + 32 * j;
			for (int l = 0; l < 32; l++) {
				a[64 * j + l] = (int8_t)(q[l] & 0xF);
				a[64 * j + 32 + l] = (int8_t)(q[l] >> 4);
			}
			if (q5) {
				const uint8_t *qh = wb + 16;
				uint8_t u1 = (uint8_t)(1u << (2 * j)), u2 = (uint8_t)(2u << (2 * j));
				for (int l = 0; l < 32; l++) {
					a[64 * j + l] += (qh[l] & u1) ? 16 : 0;
					a[64 * j + 32 + l] += (qh[l] & u2) ? 16 : 0;
				}
			}
		}
		for (int j = 0; j < 8; j++) {
			int32_t s, m; hx_scale_min_k4(j, wb + 4, &s, &m);
			scales[2 * j] = s; scales[2 * j + 1] = s; mn[j] = m;
		}
	} else {
		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = wb + 64 * h, *qh = wb + 128 + 32 * h;
			int8_t *o = a + 128 * h;
			for (int l = 0; l < 32; l++) {
				uint8_t hb = qh[l];
				o[l] = (int8_t)((ql[l] & 0xF) | ((hb & 3) << 4)) - 32;
				o[l + 32] = (int8_t)((ql[l + 32] & 0xF) | (((hb >> 2) & 3) << 4)) - 32;
				o[l + 64] = (int8_t)((ql[l] >> 4) | (((hb >> 4) & 3) << 4)) - 32;
				o[l + 96] = (int8_t)((ql[l + 32] >> 4) | (((hb >> 6) & 3) << 4)) - 32;
			}
		}
		for (int j = 0; j < 16; j++) scales[j] = (int8_t)wb[192 + j];
	}
}

// hx_k_acc is the float part of one block of a K-quant kernel for one
// activation block xb, given the lane sums aux: the same operations as the
// one-row kernel of that kind.
#define HX_K_ACC(SFX, ATTR, H2F) \
ATTR static inline void hx_k_acc##SFX(int kind, const uint8_t *wb, const uint8_t *xb, const int32_t *aux, const int32_t *mn,  \
                            float *sums, float *sumf) {                                                                       \
	if (kind == 2) {                                                                                                          \
		int32_t summs = 0;                                                                                                    \
		for (int j = 0; j < 16; j++) summs += (int32_t)hx_i16(xb + 260 + 2 * j) * (wb[j] >> 4);                               \
		int32_t isum = aux[0] + aux[1] + aux[2] + aux[3] + aux[4] + aux[5] + aux[6] + aux[7];                                 \
		float yd = hx_f32(xb);                                                                                                \
		float dall = yd * H2F(wb + 80), dmin = yd * H2F(wb + 82);                                                             \
		float t1 = dall * (float)isum, t2 = dmin * (float)summs;                                                              \
		*sumf += t1 - t2;                                                                                                     \
	} else if (kind == 4 || kind == 5) {                                                                                      \
		int32_t sumi = 0;                                                                                                     \
		for (int j = 0; j < 16; j++) sumi += (int32_t)hx_i16(xb + 260 + 2 * j) * mn[j / 2];                                   \
		float yd = hx_f32(xb);                                                                                                \
		float d = H2F(wb) * yd;                                                                                               \
		for (int l = 0; l < 8; l++) sums[l] += d * (float)aux[l];                                                             \
		float dmin = H2F(wb + 2) * yd;                                                                                        \
		*sumf -= dmin * (float)sumi;                                                                                          \
	} else {                                                                                                                  \
		float d = H2F(wb + (kind == 3 ? 108 : 208)) * hx_f32(xb);                                                             \
		for (int l = 0; l < 8; l++) sums[l] += d * (float)aux[l];                                                             \
	}                                                                                                                         \
}
HX_K_ACC(_base, , hx_fp16)
#if defined(HX_AVX2)
HX_K_ACC(_avx2, HX_AVX2, hx_h2f_avx2)
#endif

// hx_k_store writes the final sums of a K-quant kernel (Q2_K keeps one
// running sum; the others add the eight lane sums to it in order).
static inline void hx_k_store(int kind, int nx, float sums[][8], const float *sumf, float *out, size_t os) {
	for (int j = 0; j < nx; j++) {
		float s = sumf[j];
		if (kind != 2)
			for (int l = 0; l < 8; l++) s += sums[j][l];
		out[(size_t)j * os] = s;
	}
}

// hx_mk_base: one weight row of a K-quant times nx activation rows, with
// the portable lane dot.
static void hx_mk_base(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	float sums[HX_NX][8], sumf[HX_NX];
	memset(sums, 0, sizeof sums); memset(sumf, 0, sizeof sumf);
	int8_t a[256]; int32_t scales[16], mn[8];
	const int bsz = hx_k_bsize(kind);
	for (int i = 0; i < nb; i++) {
		const uint8_t *wb = w + (size_t)i * bsz;
		hx_unpack_k(kind, wb, a, scales, mn);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 292;
			int32_t aux[8] = {0};
			hx_lane_dot16_ref(aux, a, (const int8_t *)(xb + 4), scales);
			hx_k_acc_base(kind, wb, xb, aux, mn, sums[j], &sumf[j]);
		}
	}
	hx_k_store(kind, nx, sums, sumf, out, os);
}

// hx_m_q8_0_base and hx_m_q4_0_base: the legacy kernels, one weight row
// times nx activation rows.
static void hx_m_q8_0_base(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	(void)kind;
	float sumf[HX_NX] = {0};
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 34;
		const int8_t *wq = (const int8_t *)(wb + 2);
		float dw = hx_fp16(wb);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 34;
			const int8_t *xq = (const int8_t *)(xb + 2);
			int32_t s = 0;
			for (int k = 0; k < 32; k++) s += (int32_t)wq[k] * xq[k];
			float dd = dw * hx_fp16(xb);
			sumf[j] += (float)s * dd;
		}
	}
	for (int j = 0; j < nx; j++) out[(size_t)j * os] = sumf[j];
}

static void hx_m_q4_0_base(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	(void)kind;
	float sumf[HX_NX] = {0};
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 18;
		int32_t q[32];
		for (int k = 0; k < 16; k++) { q[k] = (int32_t)(wb[2 + k] & 0x0F) - 8; q[16 + k] = (int32_t)(wb[2 + k] >> 4) - 8; }
		float dw = hx_fp16(wb);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 34;
			const int8_t *xq = (const int8_t *)(xb + 2);
			int32_t s = 0;
			for (int k = 0; k < 32; k++) s += q[k] * xq[k];
			float p = (float)s * dw;
			sumf[j] += p * hx_fp16(xb);
		}
	}
	for (int j = 0; j < nx; j++) out[(size_t)j * os] = sumf[j];
}

#if defined(HX_AVX2)
// hx_mk_avx2 is hx_mk_base with the lane dot in AVX2: per block, the
// weight integers are widened to 16 bits in hx_pairs16 order and multiplied
// by their sub-block scale once (|a*scale| <= 32*128 fits in 16 bits, and
// the pair sums in 32 bits, so the lane sums are the same exact integers),
// then each activation row costs one multiply-add per 16 values.
HX_AVX2 static void hx_mk_avx2(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	float sums[HX_NX][8], sumf[HX_NX];
	memset(sums, 0, sizeof sums); memset(sumf, 0, sizeof sumf);
	int8_t a[256]; int32_t scales[16], mn[8];
	__m256i pre[16];
	const int bsz = hx_k_bsize(kind);
	for (int i = 0; i < nb; i++) {
		const uint8_t *wb = w + (size_t)i * bsz;
		hx_unpack_k(kind, wb, a, scales, mn);
		for (int g = 0; g < 16; g++)
			pre[g] = _mm256_mullo_epi16(hx_pairs16(a + 16 * g), _mm256_set1_epi16((short)scales[g]));
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)i * 292;
			const int8_t *q8 = (const int8_t *)(xb + 4);
			__m256i acc = _mm256_madd_epi16(pre[0], hx_pairs16(q8));
			for (int g = 1; g < 16; g++) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pre[g], hx_pairs16(q8 + 16 * g)));
			int32_t aux[8];
			_mm256_storeu_si256((__m256i *)aux, acc);
			hx_k_acc_avx2(kind, wb, xb, aux, mn, sums[j], &sumf[j]);
		}
	}
	hx_k_store(kind, nx, sums, sumf, out, os);
}

HX_AVX2 static void hx_m_q8_0_avx2(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	(void)kind;
	float sumf[HX_NX] = {0};
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 34;
		__m256i a = _mm256_loadu_si256((const __m256i *)(wb + 2));
		__m256i alo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(a));
		__m256i ahi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(a, 1));
		float dw = hx_h2f_avx2(wb);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 34;
			__m128i blo = _mm_loadu_si128((const __m128i *)(xb + 2));
			__m128i bhi = _mm_loadu_si128((const __m128i *)(xb + 18));
			__m256i lo = _mm256_madd_epi16(alo, _mm256_cvtepi8_epi16(blo));
			__m256i hi = _mm256_madd_epi16(ahi, _mm256_cvtepi8_epi16(bhi));
			int32_t s = hx_hsum8(_mm256_add_epi32(lo, hi));
			float dd = dw * hx_h2f_avx2(xb);
			sumf[j] += (float)s * dd;
		}
	}
	for (int j = 0; j < nx; j++) out[(size_t)j * os] = sumf[j];
}

HX_AVX2 static void hx_m_q4_0_avx2(int kind, const uint8_t *w, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os) {
	(void)kind;
	const __m256i low = _mm256_set1_epi16(0x0F), eight = _mm256_set1_epi16(8);
	float sumf[HX_NX] = {0};
	for (int ib = 0; ib < nb; ib++) {
		const uint8_t *wb = w + (size_t)ib * 18;
		__m256i q = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(wb + 2)));
		__m256i a0 = _mm256_sub_epi16(_mm256_and_si256(q, low), eight);
		__m256i a1 = _mm256_sub_epi16(_mm256_srli_epi16(q, 4), eight);
		float dw = hx_h2f_avx2(wb);
		for (int j = 0; j < nx; j++) {
			const uint8_t *xb = x + (size_t)j * xs + (size_t)ib * 34;
			__m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xb + 2)));
			__m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xb + 18)));
			int32_t s = hx_hsum8(_mm256_add_epi32(_mm256_madd_epi16(a0, y0), _mm256_madd_epi16(a1, y1)));
			float p = (float)s * dw;
			sumf[j] += p * hx_h2f_avx2(xb);
		}
	}
	for (int j = 0; j < nx; j++) out[(size_t)j * os] = sumf[j];
}
#endif

// hx_multi picks the kernel of a type and runs it over every weight row for
// each group of up to HX_NX activation rows; fallback runs the one-row
// kernels per activation row for the other types.
static void hx_multi(int type, const uint8_t *w, size_t rb, int nrows, const uint8_t *x, size_t xs, int nx, int n,
                     float *out, size_t os, int simd) {
	hx_multi_fn fn = 0;
	int kind = 0, nb = n / 256;
	switch (type) {
	case HX_Q8_0: kind = 8; nb = n / 32; break;
	case HX_Q4_0: kind = 1; nb = n / 32; break;
	case HX_Q2_K: kind = 2; break;
	case HX_Q3_K: kind = 3; break;
	case HX_Q4_K: kind = 4; break;
	case HX_Q5_K: kind = 5; break;
	case HX_Q6_K: kind = 6; break;
	}
#if defined(HX_AVX2)
	if (simd) fn = kind == 8 ? hx_m_q8_0_avx2 : kind == 1 ? hx_m_q4_0_avx2 : kind ? hx_mk_avx2 : 0;
#endif
	if (!simd) fn = kind == 8 ? hx_m_q8_0_base : kind == 1 ? hx_m_q4_0_base : kind ? hx_mk_base : 0;
	if (!fn || nx == 1) {
		// one activation row: the one-row kernels are faster than a group of one
		for (int j = 0; j < nx; j++) {
			if (simd) hx_dot_rows(type, w, rb, nrows, x + (size_t)j * xs, n, out + (size_t)j * os);
			else hx_dot_rows_base(type, w, rb, nrows, x + (size_t)j * xs, n, out + (size_t)j * os);
		}
		return;
	}
	for (int j0 = 0; j0 < nx; j0 += HX_NX) {
		int g = nx - j0 < HX_NX ? nx - j0 : HX_NX;
		if (g == 1) {
			if (simd) hx_dot_rows(type, w, rb, nrows, x + (size_t)j0 * xs, n, out + (size_t)j0 * os);
			else hx_dot_rows_base(type, w, rb, nrows, x + (size_t)j0 * xs, n, out + (size_t)j0 * os);
			break;
		}
		for (int r = 0; r < nrows; r++)
			fn(kind, w + (size_t)r * rb, x + (size_t)j0 * xs, xs, g, nb, out + (size_t)j0 * os + r, os);
	}
}

void hx_dot_rows_multi(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride, int nx,
                       int n, float *out, size_t out_stride) {
	int simd = 0;
#if defined(HX_AVX2)
	simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
	hx_multi(type, w, row_bytes, nrows, x, x_stride, nx, n, out, out_stride, simd);
}

void hx_dot_rows_multi_base(int type, const uint8_t *w, size_t row_bytes, int nrows, const uint8_t *x, size_t x_stride,
                            int nx, int n, float *out, size_t out_stride) {
	hx_multi(type, w, row_bytes, nrows, x, x_stride, nx, n, out, out_stride, 0);
}
