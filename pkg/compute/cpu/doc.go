// Package cpu is the compute.Backend that runs on the host's cores: host
// tensors, a paged KV cache in F32 or F16, a worker pool, and kernels in
// Go with C vector versions (AVX2, AVX-512) through cgo, each checked
// against its portable Go oracle. Weights stay quantized in place (or
// packed once at Prepare for the VNNI kernels); the quantized formats and
// their dot products live in compute/quant.
package cpu
