// cuda_fp16.h stands in for CUDA's header when g++ compiles the kernels:
// the shim defines __half and its conversions.
#pragma once
#include "cuda_emu.h"
