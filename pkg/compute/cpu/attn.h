#ifndef HELEXA_COMPUTE_ATTN_H
#define HELEXA_COMPUTE_ATTN_H
#include <stdint.h>

// hx_attn_simd reports which build of the kernels this CPU runs: 2 for
// AVX-512F, 1 for AVX2+FMA, 0 for none. Every kernel below takes that isa
// (1 or 2, at most hx_attn_simd()).
int hx_attn_simd(void);
// hx_attend computes attention for g query heads (q, g×d values) sharing
// one KV head, over positions [first, n) found through the block table
// (first > 0: a sliding window): position slot s of block b has its key at
// kl + (b·bs + s)·kvdim + kvoff (its value likewise in vl), so kvdim is the
// distance from one row of the head to the next in a block (helexa's store
// keeps a head's rows together: kvdim = d, kvoff = 0); scores holds
// g×(n-first) scratch floats; out receives g×d values.
void hx_attend(int isa, const float *q, float *out, int g, int d, const float *kl, const float *vl,
               const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores);
// hx_attend16 is hx_attend over an F16 cache (kl, vl hold F16 bits).
void hx_attend16(int isa, const float *q, float *out, int g, int d, const uint16_t *kl, const uint16_t *vl,
                 const int32_t *blocks, int bs, int kvdim, int kvoff, int n, int first, float scale, float *scores);
// hx_attend_tile_rows is how many consecutive query rows hx_attend_tile
// takes for g heads per KV head and head size d (0: it cannot).
int hx_attend_tile_rows(int g, int d);
// hx_attend_tile is hx_attend for r = hx_attend_tile_rows(g, d)
// consecutive query rows (row i at q + i*qs and out + i*qs) over positions
// [0, n0+i), or their last window when window > 0, reading each cached row
// once for all of them; scores holds r×g×(n0+r-1) floats.
void hx_attend_tile(int isa, const float *q, long qs, float *out, int r, int g, int d, const float *kl, const float *vl,
                    const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores);
// hx_attend_tile16 is hx_attend_tile over an F16 cache.
void hx_attend_tile16(int isa, const float *q, long qs, float *out, int r, int g, int d, const uint16_t *kl, const uint16_t *vl,
                      const int32_t *blocks, int bs, int kvdim, int kvoff, int n0, int window, float scale, float *scores);
// hx_to_f16 rounds n floats to F16 bits (to nearest even).
void hx_to_f16(int isa, const float *x, uint16_t *out, int n);
// hx_swiglu writes out[i] = silu(gate[i]) · up[i] (vector exp: within a few
// ulp of the Go kernel).
void hx_swiglu(int isa, const float *gate, const float *up, float *out, int n);
// hx_conv_silu writes out[t][c] = silu(Σ_j wt[j][c] · in(t-(k-1)+j)[c]) for
// channels [c0, c1) of n rows of ch channels, where in(τ) is row τ of x,
// or for τ < 0 row k-1+τ of the state st; wt holds the k taps channel-minor
// (tap j of channel c at j·ch+c).
void hx_conv_silu(const float *x, const float *st, const float *wt, float *out, int ch, int k, int n, int c0, int c1);
#endif
