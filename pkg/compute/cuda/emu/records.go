package emu

// Q8KRecord is the bytes of one Q8_K activation record of the kernels
// (HX_Q8K_REC in pkg/compute/cuda/kernels/common.cuh): 256 signed bytes, their
// float scale, padding to 16-byte alignment. The rounding kernels write
// them and the K-quant matvecs read them; the backend sizes and offsets
// its buffers by it.
const Q8KRecord = 272
