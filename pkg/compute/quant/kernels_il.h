#ifndef HELEXA_QUANT_KERNELS_IL_H
#define HELEXA_QUANT_KERNELS_IL_H
// The row-interleaved layouts shared by the prefill kernels of
// kernels_vnni.c and the packed (load-time interleaved) weights of
// kernels_r16.c: 16 weight rows per group, four consecutive values of each
// row per 64-byte vector, so that one vpdpbusd multiplies 16 rows with four
// activation bytes broadcast to every lane.
#include <stddef.h>
#include <stdint.h>

#define HX_IL 16
// HX_IL_MIN and HX_IL8_MIN are the fewest activation rows for which the
// unpacking pays (BenchmarkPrefillChunk: at 16 rows the K-quants' tile
// kernels are still 10-20 % faster, Q8_0's already 30 % slower).
#define HX_IL_MIN 32
#define HX_IL8_MIN 16

// hx_vfn is a row-at-a-time kernel of kernels_vnni.c: nr weight rows (rb
// bytes apart) times nx activation rows (xs apart) into out (os apart).
typedef void (*hx_vfn)(const uint8_t *w, size_t rb, int nr, const uint8_t *x, size_t xs, int nx, int nb, float *out, size_t os);

// hx_il_block is one block of 256 values of a K-quant group, unpacked to a
// byte per value.
// Its sums are integers to the end of each block, scaled then by the
// block's d (and dmin), as the packed decode kernels do: the two give the
// same bits for any number of activation rows.
typedef struct {
	uint8_t q[64][64];     // values 4m … 4m+3 of each row: q[m][4·row + t], unsigned
	int32_t sc[16][HX_IL]; // per sub-block (8 of 32 values for Q4_K, 16 of 16 for Q6_K): each row's scale
	int32_t mn[8][HX_IL];  // Q4_K and Q5_K, per sub-block: each row's min
	float d[HX_IL], dmin[HX_IL];
} hx_il_block;

// hx_il8_block is one block of 32 values of a Q8_0 group.
typedef struct {
	uint8_t q[8][64]; // values 4m … 4m+3 of each row, plus 128: q[m][4·row + t]
	float d[HX_IL];   // each row's scale
} hx_il8_block;

// hx_r16_to_il unpacks one packed Q4_K or Q6_K group of nb blocks into
// hx_il_block's layout; hx_r16_to_il8 one Q8_0 group into hx_il8_block's.
void hx_r16_to_il(int type, const uint8_t *p, int nb, hx_il_block *out);
void hx_r16_to_il8(const uint8_t *p, int nb, hx_il8_block *out);
// hx_il_packed_rows and hx_il8_packed_rows (kernels_vnni.c) run the
// interleaved prefill kernels over ng packed groups (Q4_K or Q6_K; Q8_0),
// nx ≥ 1 activation rows; 0 when they could not allocate their buffers.
int hx_il_packed_rows(int type, const uint8_t *p, size_t gb, int ng, const uint8_t *x, size_t xs, int nx, int nb,
                      float *out, size_t os);
int hx_il8_packed_rows(const uint8_t *p, size_t gb, int ng, const uint8_t *x, size_t xs, int nx, int nb, float *out,
                       size_t os);
#endif
