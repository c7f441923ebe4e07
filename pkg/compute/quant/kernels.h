#ifndef HELEXA_QUANT_KERNELS_H
#define HELEXA_QUANT_KERNELS_H
#include <stdint.h>
float hx_dot_q4_0(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q4_1(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q5_0(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q5_1(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q8_0(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q2_k(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q3_k(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q4_k(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q5_k(const uint8_t *w, const uint8_t *x, int nb);
float hx_dot_q6_k(const uint8_t *w, const uint8_t *x, int nb);
#endif
