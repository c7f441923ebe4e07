// Package compute owns the coarse operations that model architectures are
// written against (the Backend interface: embedding lookup, matmul with a
// possibly-quantized weight, RMSNorm, RoPE, attention over the paged KV
// cache, SwiGLU, add, MoE routing), the weight handle that views quantized
// tensors in place, the paged F32 KV cache, and the CPU implementation.
//
// Quant formats themselves (block layouts, dot products) live in
// compute/quant; this package only drives them.
package compute
