// Package compute owns the device-neutral seam that model architectures are
// written against: the Backend interface of coarse operations (embedding
// lookup, matmuls with possibly-quantized weights, norms, RoPE, attention
// over a paged KV store, the FFN activations, MoE routing, the recurrent
// operations of gated DeltaNet layers, an all-reduce hook for tensor
// parallelism, and composites of them a GPU runs as one launch) over
// Tensors and KV stores the backend owns; the few optional interfaces
// only some backends have; the weight handle that views quantized tensors
// in place; and the host references of operations every backend shares
// (RouteRows, Softmax, DeviceReserve). It holds no implementation:
// compute/cpu runs the operations on the host's cores, compute/cuda on an
// NVIDIA GPU (or its emulator), and compute/quant owns the quantized
// formats both read. docs/compute.md is the recipe for adding an
// operation.
package compute
