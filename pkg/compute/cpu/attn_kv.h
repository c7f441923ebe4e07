// Attention kernels over one KV element type and one instruction set,
// included by attn_isa.h once per type (no include guard): KV_T is the
// cached element, KV_LOAD(p) loads VW of them as floats into a VT vector,
// KV_AT(p, i) one, KV_SUF(name) names the functions; VA is their target
// attribute and V_* the vector operations. The query, scores and output
// are F32 in every instance.

// dot of an F32 query head with one cached key row.
VA static inline float KV_SUF(hx_dot)(const float *a, const KV_T *b, int d) {
	VT s0 = V_ZERO(), s1 = V_ZERO();
	int i = 0;
	for (; i + 2 * VW <= d; i += 2 * VW) {
		s0 = V_FMA(V_LOADU(a + i), KV_LOAD(b + i), s0);
		s1 = V_FMA(V_LOADU(a + i + VW), KV_LOAD(b + i + VW), s1);
	}
	for (; i + VW <= d; i += VW) s0 = V_FMA(V_LOADU(a + i), KV_LOAD(b + i), s0);
	float s = V_REDUCE(V_ADD(s0, s1));
	for (; i < d; i++) s += a[i] * KV_AT(b, i);
	return s;
}

// pv adds to out[0..w) Σ_j p[j] · v_{first+j}[c0 .. c0+w) over j0 ≤ j <
// j1, starting from zeros for j0 = 0 and from what out holds after it
// (each lane sums its positions in order, to the same bits as one pass),
// for w = 4·VW or 8·VW (a constant at every call, so the w/VW accumulators
// stay in registers); pf: prefetch the rows HX_KV_AHEAD ahead (below n).
VA static inline __attribute__((always_inline)) void KV_SUF(hx_pv)(float *out, const float *p, int j0, int j1, int n,
                                                                      const KV_T *vl, const int32_t *blocks, int bs,
                                                                      int kvdim, int kvoff, int first, int w, int pf) {
	VT a[8];
	for (int i = 0; i < w / VW; i++) a[i] = j0 ? V_LOADU(out + VW * i) : V_ZERO();
	hx_rowstep vs = hx_rowstep_at(first + j0, bs), ps = hx_rowstep_at(first + j0 + HX_KV_AHEAD, bs);
	for (int j = j0; j < j1; j++, hx_rowstep_next(&vs, bs), hx_rowstep_next(&ps, bs)) {
		if (pf && j + HX_KV_AHEAD < n) hx_prefetch_bytes(HX_STEP_ROW(vl, ps), (size_t)w * sizeof(KV_T));
		const KV_T *v = HX_STEP_ROW(vl, vs);
		VT pj = V_SET1(p[j]);
		for (int i = 0; i < w / VW; i++) a[i] = V_FMA(pj, KV_LOAD(v + VW * i), a[i]);
	}
	for (int i = 0; i < w / VW; i++) V_STOREU(out + VW * i, a[i]);
}

// key_rows finds the jn cached key rows of positions j0.. (ks on, moving
// ks and ps past them) and prefetches for each the row HX_KV_AHEAD
// positions on (ps), while that is below n.
VA static inline __attribute__((always_inline)) void KV_SUF(hx_key_rows)(const KV_T **kr, hx_rowstep *ks, hx_rowstep *ps,
                                                                            int j0, int jn, int n, const KV_T *kl,
                                                                            const int32_t *blocks, int bs, int kvdim,
                                                                            int kvoff, int d) {
	for (int jj = 0; jj < jn; jj++, hx_rowstep_next(ks, bs), hx_rowstep_next(ps, bs)) {
		if (j0 + jj + HX_KV_AHEAD < n) hx_prefetch_bytes(HX_STEP_ROW(kl, *ps), (size_t)d * sizeof(KV_T));
		kr[jj] = HX_STEP_ROW(kl, *ks);
	}
}

// value_rows finds the cached value rows of positions j0 up to jr (row
// first+j at vr[j - j0]): a block's rows, j < j1, and those its
// prefetches reach, up to HX_KV_AHEAD more below n. It returns jr.
VA static inline __attribute__((always_inline)) int KV_SUF(hx_value_rows)(const KV_T **vr, int first, int j0, int j1,
                                                                             int n, const KV_T *vl,
                                                                             const int32_t *blocks, int bs, int kvdim,
                                                                             int kvoff) {
	const int jr = j1 + HX_KV_AHEAD < n ? j1 + HX_KV_AHEAD : n;
	hx_rowstep vs = hx_rowstep_at(first + j0, bs);
	for (int j = j0; j < jr; j++, hx_rowstep_next(&vs, bs)) vr[j - j0] = HX_STEP_ROW(vl, vs);
	return jr;
}

// qk_block writes the scores of NU query heads (head u's d values at
// qh[u]) against the cached key rows kr[0..jn), jn ≤ VW, times scale, to
// sc + u·scs: each dot summed as hx_dot sums it (even vectors in s0, odd
// ones in s1: d is a multiple of 2·VW), each key vector widened once for
// the NU heads, and a head's VW dots reduced together by V_REDUCEV, to the
// bits of V_REDUCE one by one.
VA static inline __attribute__((always_inline)) void KV_SUF(hx_qk_block)(const float *const *qh, int d, float *sc,
                                                                            size_t scs, const KV_T *const *kr, int jn,
                                                                            float scale, const int NU) {
	VT t[4][VW];
	for (int jj = 0; jj < jn; jj++) {
		VT s0[4], s1[4];
		for (int u = 0; u < NU; u++) s0[u] = s1[u] = V_ZERO();
		for (int i = 0; i < d; i += 2 * VW) {
			const VT k0 = KV_LOAD(kr[jj] + i), k1 = KV_LOAD(kr[jj] + i + VW);
			for (int u = 0; u < NU; u++) {
				s0[u] = V_FMA(V_LOADU(qh[u] + i), k0, s0[u]);
				s1[u] = V_FMA(V_LOADU(qh[u] + i + VW), k1, s1[u]);
			}
		}
		for (int u = 0; u < NU; u++) t[u][jj] = V_ADD(s0[u], s1[u]);
	}
	for (int u = 0; u < NU; u++) {
		for (int jj = jn; jj < VW; jj++) t[u][jj] = V_ZERO();
		const VT r = V_MUL(V_REDUCEV(t[u]), V_SET1(scale));
		if (jn == VW) {
			V_STOREU(sc + u * scs, r);
			continue;
		}
		float tmp[VW];
		V_STOREU(tmp, r);
		for (int jj = 0; jj < jn; jj++) sc[u * scs + jj] = tmp[jj];
	}
}

// pvn adds to NU output heads (head u's at o + u·d), NV vectors at c, the
// value rows vr (from j0) of positions j0..j1-1 weighted by head u's
// probabilities p + u·pn, starting from zeros for the first block (j0 =
// 0) and from what the outputs hold after it: each lane sums its positions
// in order, as hx_pv and hx_pv4 do, and each value vector is widened once
// for the NU heads. pf: prefetch the rows HX_KV_AHEAD ahead (up to jr).
VA static inline __attribute__((always_inline)) void KV_SUF(hx_pvn)(float *o, int d, const float *p, size_t pn,
                                                                       const KV_T *const *vr, int j0, int j1, int jr,
                                                                       int c, const int NU, const int NV, int pf) {
	VT a[4][V_PVACC];
	for (int u = 0; u < NU; u++)
		for (int k = 0; k < NV; k++) a[u][k] = j0 ? V_LOADU(o + (size_t)u * d + c + VW * k) : V_ZERO();
	for (int j = j0; j < j1; j++) {
		if (pf && j + HX_KV_AHEAD < jr) hx_prefetch_bytes(vr[j + HX_KV_AHEAD - j0] + c, (size_t)NV * VW * sizeof(KV_T));
		VT w[4];
		for (int u = 0; u < NU; u++) w[u] = V_SET1(p[u * pn + j]);
		for (int k = 0; k < NV; k++) {
			const VT v = KV_LOAD(vr[j - j0] + c + VW * k);
			for (int u = 0; u < NU; u++) a[u][k] = V_FMA(w[u], v, a[u][k]);
		}
	}
	for (int u = 0; u < NU; u++)
		for (int k = 0; k < NV; k++) V_STOREU(o + (size_t)u * d + c + VW * k, a[u][k]);
}

// HX_PV_HEADS runs hx_pvn over every part of d for the NU_ heads from h
// (hx_attend_grp's names in scope): V_PVACC/NU_ vectors at a time, then
// one at a time.
#define HX_PV_HEADS(NU_)                                                                                           \
	do {                                                                                                           \
		int c_ = 0;                                                                                                \
		for (; c_ + V_PVACC / (NU_) * VW <= d; c_ += V_PVACC / (NU_) * VW)                                        \
			KV_SUF(hx_pvn)(out + (size_t)h * d, d, scores + (size_t)h * n, n, vr, j0, j1, jr, c_, NU_, V_PVACC / (NU_), \
			               h == 0);                                                                              \
		for (; c_ < d; c_ += VW)                                                                                   \
			KV_SUF(hx_pvn)(out + (size_t)h * d, d, scores + (size_t)h * n, n, vr, j0, j1, jr, c_, NU_, 1, h == 0);   \
		h += NU_;                                                                                                  \
	} while (0)

// attend_grp is attend_simd for d a multiple of 2·VW: the g heads go
// through each cached row four, two or one at a time, so that every key
// and value vector is widened once for several heads, and the scores of VW
// positions are reduced together; every sum runs in attend_simd's order,
// to its bits (and so to hx_attend_tile's).
VA static inline __attribute__((always_inline)) void KV_SUF(hx_attend_grp_d)(const float *q, float *out, int g, int d, const KV_T *kl, const KV_T *vl,
                                            const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first,
                                            float scale, float *scores) {
	n -= first; // rows first+j, j < n
	hx_rowstep ks = hx_rowstep_at(first, bs), ps = hx_rowstep_at(first + HX_KV_AHEAD, bs);
	for (int j0 = 0; j0 < n; j0 += VW) {
		const int jn = n - j0 < VW ? n - j0 : VW;
		const KV_T *kr[VW];
		KV_SUF(hx_key_rows)(kr, &ks, &ps, j0, jn, n, kl, blocks, bs, kvdim, kvoff, d);
		for (int h = 0; h < g;) {
			float *sc = scores + (size_t)h * n + j0;
			const float *qh[4]; // the heads from h (past g: h's again, never read)
			for (int u = 0; u < 4; u++) qh[u] = q + (size_t)(h + (h + u < g ? u : 0)) * d;
			if (g - h >= 4) {
				KV_SUF(hx_qk_block)(qh, d, sc, n, kr, jn, scale, 4);
				h += 4;
			} else if (g - h >= 2) {
				KV_SUF(hx_qk_block)(qh, d, sc, n, kr, jn, scale, 2);
				h += 2;
			} else {
				KV_SUF(hx_qk_block)(qh, d, sc, n, kr, jn, scale, 1);
				h++;
			}
		}
	}
	for (int h = 0; h < g; h++) V_SOFTMAX(scores + (size_t)h * n, n);
	for (int j0 = 0; j0 < n; j0 += HX_VBLK) {
		const int j1 = n - j0 < HX_VBLK ? n : j0 + HX_VBLK;
		const KV_T *vr[HX_VBLK + HX_KV_AHEAD];
		const int jr = KV_SUF(hx_value_rows)(vr, first, j0, j1, n, vl, blocks, bs, kvdim, kvoff);
		for (int h = 0; h < g;) {
			if (g - h >= 4) HX_PV_HEADS(4);
			else if (g - h >= 2) HX_PV_HEADS(2);
			else HX_PV_HEADS(1);
		}
	}
	if (n == 0)
		for (int i = 0; i < g * d; i++) out[i] = 0;
}

// attend_grp runs attend_grp_d with d a constant for the common head
// sizes, so that the loops over d unroll.
VA static void KV_SUF(hx_attend_grp)(const float *q, float *out, int g, int d, const KV_T *kl, const KV_T *vl,
                                            const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first,
                                            float scale, float *scores) {
	if (d == 128) KV_SUF(hx_attend_grp_d)(q, out, g, 128, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
	else if (d == 64) KV_SUF(hx_attend_grp_d)(q, out, g, 64, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
	else KV_SUF(hx_attend_grp_d)(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
}
#undef HX_PV_HEADS

// attend_simd computes g query heads sharing one KV head over positions
// [first, n): scores, softmax, the weighted sum of the values.
VA static void KV_SUF(hx_attend_simd)(const float *q, float *out, int g, int d, const KV_T *kl, const KV_T *vl,
                                             const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first,
                                             float scale, float *scores) {
	if (d % (2 * VW) == 0) {
		KV_SUF(hx_attend_grp)(q, out, g, d, kl, vl, blocks, bs, kvdim, kvoff, n, first, scale, scores);
		return;
	}
	n -= first; // rows first+j, j < n
	hx_rowstep ks = hx_rowstep_at(first, bs), ps = hx_rowstep_at(first + HX_KV_AHEAD, bs);
	for (int j = 0; j < n; j++, hx_rowstep_next(&ks, bs), hx_rowstep_next(&ps, bs)) {
		if (j + HX_KV_AHEAD < n) hx_prefetch_bytes(HX_STEP_ROW(kl, ps), (size_t)d * sizeof(KV_T));
		const KV_T *k = HX_STEP_ROW(kl, ks);
		for (int h = 0; h < g; h++) scores[(size_t)h * n + j] = KV_SUF(hx_dot)(q + (size_t)h * d, k, d) * scale;
	}
	for (int h = 0; h < g; h++) V_SOFTMAX(scores + (size_t)h * n, n);
	// the positions in blocks of HX_VBLK, every head's passes over d
	// walking a block's rows while they are in L1 (one pass over every
	// position for each head and part of d read the values from memory
	// again for each head once a context outgrew L2); the first head's
	// passes prefetch
	for (int j0 = 0; j0 < n; j0 += HX_VBLK) {
		const int j1 = n - j0 < HX_VBLK ? n : j0 + HX_VBLK;
		for (int h = 0; h < g; h++) {
			const float *p = scores + (size_t)h * n;
			float *o = out + (size_t)h * d;
			int c = 0;
			for (; c + 8 * VW <= d; c += 8 * VW)
				KV_SUF(hx_pv)(o + c, p, j0, j1, n, vl, blocks, bs, kvdim, kvoff + c, first, 8 * VW, h == 0);
			for (; c + 4 * VW <= d; c += 4 * VW)
				KV_SUF(hx_pv)(o + c, p, j0, j1, n, vl, blocks, bs, kvdim, kvoff + c, first, 4 * VW, h == 0);
			if (c < d) {
				if (j0 == 0)
					for (int i = c; i < d; i++) o[i] = 0;
				hx_rowstep vs = hx_rowstep_at(first + j0, bs);
				for (int j = j0; j < j1; j++, hx_rowstep_next(&vs, bs)) {
					const KV_T *v = HX_STEP_ROW(vl, vs);
					for (int i = c; i < d; i++) o[i] += p[j] * KV_AT(v, i);
				}
			}
		}
	}
	if (n == 0)
		for (int i = 0; i < g * d; i++) out[i] = 0;
}

// pv4 adds to out rows o[0..3] at c (nv vectors each, nv a constant at
// every call) the values of positions j0..j1-1 (rows vr, from j0) weighted
// by p[0..3][j], starting from zeros for the first block (j0 = 0) and
// from what o holds after it; pf: prefetch the rows HX_KV_AHEAD ahead (up
// to jr).
VA static inline __attribute__((always_inline)) void KV_SUF(hx_pv4)(float *const *o, const float *const *p,
                                                                       const KV_T *const *vr, int j0, int j1, int jr,
                                                                       int c, int nv, int pf) {
	VT a[4][3], v[3];
	for (int u = 0; u < 4; u++)
		for (int k = 0; k < nv; k++) a[u][k] = j0 ? V_LOADU(o[u] + c + VW * k) : V_ZERO();
	for (int j = j0; j < j1; j++) {
		if (pf && j + HX_KV_AHEAD < jr) hx_prefetch_bytes(vr[j + HX_KV_AHEAD - j0] + c, (size_t)nv * VW * sizeof(KV_T));
		for (int k = 0; k < nv; k++) v[k] = KV_LOAD(vr[j - j0] + c + VW * k);
		for (int u = 0; u < 4; u++) {
			const VT w = V_SET1(p[u][j]);
			for (int k = 0; k < nv; k++) a[u][k] = V_FMA(w, v[k], a[u][k]);
		}
	}
	for (int u = 0; u < 4; u++)
		for (int k = 0; k < nv; k++) V_STOREU(o[u] + c + VW * k, a[u][k]);
}

// attend_tile computes HX_TILE (row, head) pairs: r consecutive query rows
// (row i at q + i*qs, out + i*qs, its g heads contiguous; r*g == HX_TILE)
// that share one KV head, row i seeing positions [0, n0+i), or the last
// window of them when window > 0. Each cached key and value row is read
// once for the whole tile instead of once per row; positions a row does
// not see get probability 0. scores holds HX_TILE × (n0+r-1) floats.
VA static inline __attribute__((always_inline)) void KV_SUF(hx_attend_tile_d)(const float *q, size_t qs, float *out, int r,
                                                                                  int g, int d, const KV_T *kl,
                                                                                  const KV_T *vl, const int32_t *blocks,
                                                                                  int bs, int kvdim, int kvoff, int n0,
                                                                                  int window, float scale, float *scores) {
	// rows first+j, j < nmax: from row 0's first position
	const int first = window > 0 && n0 > window ? n0 - window : 0;
	const int nmax = n0 + r - 1 - first;
	// the pairs' query heads and outputs (worked out once: g is not a
	// constant)
	const float *qp[HX_TILE];
	float *o[HX_TILE];
	for (int m = 0; m < HX_TILE; m++) {
		const size_t off = (size_t)(m / g) * qs + (size_t)(m % g) * d;
		qp[m] = q + off;
		o[m] = out + off;
	}
	// VW positions at a time, four pairs at a time (hx_qk_block: each key
	// vector widened once for four dots, and the dots summed and reduced
	// as hx_dot and V_REDUCE would, to the same bits)
	hx_rowstep ks = hx_rowstep_at(first, bs), ps = hx_rowstep_at(first + HX_KV_AHEAD, bs);
	for (int j0 = 0; j0 < nmax; j0 += VW) {
		const int jn = nmax - j0 < VW ? nmax - j0 : VW;
		const KV_T *kr[VW];
		KV_SUF(hx_key_rows)(kr, &ks, &ps, j0, jn, nmax, kl, blocks, bs, kvdim, kvoff, d);
		for (int m0 = 0; m0 < HX_TILE; m0 += 4)
			KV_SUF(hx_qk_block)(qp + m0, d, scores + (size_t)m0 * nmax + j0, nmax, kr, jn, scale, 4);
	}
	for (int m = 0; m < HX_TILE; m++) {
		float *p = scores + (size_t)m * nmax;
		int n = n0 + m / g; // row m/g sees [n-window, n) or [0, n)
		int lo = (window > 0 && n > window ? n - window : 0) - first, hi = n - first;
		V_SOFTMAX(p + lo, hi - lo);
		for (int j = 0; j < lo; j++) p[j] = 0;
		for (int j = hi; j < nmax; j++) p[j] = 0;
	}
	// The positions go in blocks of HX_VBLK whose value rows stay in L1
	// while the passes over d walk them (one pass over every position read
	// a row's line once per vector, from L2); between blocks the sums wait
	// in out, each lane still summing its positions in order, to the same
	// bits.
	for (int j0 = 0; j0 < nmax; j0 += HX_VBLK) {
		const int j1 = nmax - j0 < HX_VBLK ? nmax : j0 + HX_VBLK;
		// the block's rows (and those the prefetches reach), looked up
		// once for all the passes
		const KV_T *vr[HX_VBLK + HX_KV_AHEAD];
		const int jr = KV_SUF(hx_value_rows)(vr, first, j0, j1, nmax, vl, blocks, bs, kvdim, kvoff);
#if V_TV == 1
		// four pairs at a time, three vectors of values each: twelve
		// chains of FMAs, where eight (the latency of each FMA times the
		// two a cycle) left no slack, and a broadcast weight for three
		// FMAs instead of one; the first group prefetches the rows for both
		for (int m0 = 0; m0 < HX_TILE; m0 += 4) {
			const float *p[4] = {scores + (size_t)m0 * nmax, scores + (size_t)(m0 + 1) * nmax,
			                     scores + (size_t)(m0 + 2) * nmax, scores + (size_t)(m0 + 3) * nmax};
			int c = 0;
			for (; c + 3 * VW <= d; c += 3 * VW) KV_SUF(hx_pv4)(o + m0, p, vr, j0, j1, jr, c, 3, m0 == 0);
			for (; c < d; c += VW) KV_SUF(hx_pv4)(o + m0, p, vr, j0, j1, jr, c, 1, m0 == 0);
		}
#else
		// V_TV vectors of values per pair: the 8·V_TV accumulators and the
		// values fill the registers
		for (int c = 0; c < d; c += V_TV * VW) {
			VT a0[HX_TILE], a1[HX_TILE];
			for (int m = 0; m < HX_TILE; m++) {
				a0[m] = j0 ? V_LOADU(o[m] + c) : V_ZERO();
				a1[m] = V_TV > 1 && j0 ? V_LOADU(o[m] + c + VW) : V_ZERO();
			}
			for (int j = j0; j < j1; j++) {
				if (j + HX_KV_AHEAD < jr) hx_prefetch_bytes(vr[j + HX_KV_AHEAD - j0] + c, V_TV * VW * sizeof(KV_T));
				const KV_T *v = vr[j - j0] + c;
				VT v0 = KV_LOAD(v), v1 = V_TV > 1 ? KV_LOAD(v + VW) : v0;
				for (int m = 0; m < HX_TILE; m++) {
					VT w = V_SET1(scores[(size_t)m * nmax + j]);
					a0[m] = V_FMA(w, v0, a0[m]);
					if (V_TV > 1) a1[m] = V_FMA(w, v1, a1[m]);
				}
			}
			for (int m = 0; m < HX_TILE; m++) {
				V_STOREU(o[m] + c, a0[m]);
				if (V_TV > 1) V_STOREU(o[m] + c + VW, a1[m]);
			}
		}
#endif
	}
	if (nmax == 0)
		for (int m = 0; m < HX_TILE; m++)
			for (int c = 0; c < d; c++) o[m][c] = 0;
}

// attend_tile runs attend_tile_d with d a constant for the common head
// sizes, so that the loops over d unroll.
VA static void KV_SUF(hx_attend_tile)(const float *q, size_t qs, float *out, int r, int g, int d, const KV_T *kl,
                                             const KV_T *vl, const int32_t *blocks, int bs, int kvdim, int kvoff, int n0,
                                             int window, float scale, float *scores) {
	if (d == 128)
		KV_SUF(hx_attend_tile_d)(q, qs, out, r, g, 128, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
	else if (d == 64)
		KV_SUF(hx_attend_tile_d)(q, qs, out, r, g, 64, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
	else
		KV_SUF(hx_attend_tile_d)(q, qs, out, r, g, d, kl, vl, blocks, bs, kvdim, kvoff, n0, window, scale, scores);
}
