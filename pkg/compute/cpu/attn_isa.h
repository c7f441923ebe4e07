// Instantiates the attention kernels of attn_kv.h for an F32 cache (…_f32)
// and an F16 one (…_f16) with the vector operations attn.c defines for one
// instruction set (VA, VT, VW, V_*, ISA_SUF), then clears those names for
// the next set. Included by attn.c once per instruction set (no include
// guard).
#define KV_T float
#define KV_SUF(name) ISA_SUF(name##_f32)
#define KV_LOAD(p) V_LOADU(p)
#define KV_AT(p, i) ((p)[i])
#include "attn_kv.h"
#undef KV_T
#undef KV_SUF
#undef KV_LOAD
#undef KV_AT

#define KV_T uint16_t
#define KV_SUF(name) ISA_SUF(name##_f16)
#define KV_LOAD(p) V_LOADH(p)
#define KV_AT(p, i) _cvtsh_ss((p)[i])
#include "attn_kv.h"
#undef KV_T
#undef KV_SUF
#undef KV_LOAD
#undef KV_AT

#undef VA
#undef VT
#undef VW
#undef V_TV
#undef V_ZERO
#undef V_SET1
#undef V_LOADU
#undef V_LOADH
#undef V_STOREU
#undef V_FMA
#undef V_ADD
#undef V_REDUCE
#undef V_REDUCEV
#undef V_MUL
#undef V_PVACC
#undef V_SOFTMAX
#undef ISA_SUF
