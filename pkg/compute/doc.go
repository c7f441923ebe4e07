// Package compute owns the device-neutral seam that model architectures are
// written against — the Backend interface of coarse operations (embedding
// lookup, matmul with a possibly-quantized weight, RMSNorm, RoPE, attention
// over a paged KV store, SwiGLU, add, bias, row gather/scale/sum for MoE,
// MoE routing, an all-reduce hook for tensor parallelism) over Tensors and
// KV stores the backend owns, with optional extensions some families need
// (GeGLU, sliding-window attention, soft-capping, the recurrent operations
// of gated DeltaNet layers, several matmuls in one pass) — plus the weight
// handle that views quantized tensors in place, and the CPU implementation
// (host tensors, an F32 paged KV cache, a worker pool).
//
// Quant formats themselves (block layouts, dot products) live in
// compute/quant; this package only drives them.
package compute
