// Package cuda is the CUDA compute backend of the helexa-cuda runner: a
// compute.Backend whose tensors, weights and paged KV stores live in one
// GPU's memory, driven through gorgonia.org/cu (device, context, PTX
// modules, launches, memory) and cuBLAS (opened at run time).
//
// Only the files with the `cuda` build tag touch the GPU; the ones without
// it hold the host-side planning every device call rests on (kernel
// argument packing, launch geometry, KV slot and block-table packing,
// which weight types stay quantized on the device) so that it is tested on
// every machine. The kernels themselves are in pkg/compute/cuda/kernels, compiled
// to PTX by scripts/build-ptx.sh and embedded in the binary.
//
// One goroutine locked to its OS thread owns the device's context; every
// device call of the backend runs on it. Kernel launches are recorded and
// sent in segments, a segment seen before as a CUDA graph (graphs.go). A CUDA error is a device failure:
// the operation panics (or returns the error), the executor's caller
// poisons the model, and the daemon restarts the runner.
package cuda
