// The one translation unit of helexa's CUDA kernels: scripts/build-ptx.sh
// compiles it to PTX with nvcc, pkg/compute/cuda/emu compiles it with g++ through
// its shim. Every kernel is extern "C" under its hx_ name.
#include "elementwise.cu"
#include "norm.cu"
#include "attention.cu"
#include "matvec.cu"
#include "dequant.cu"
#include "recurrent.cu"
