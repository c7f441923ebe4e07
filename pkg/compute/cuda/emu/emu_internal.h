// Declarations shared by the emulator's runtime (emu.cc) and its kernel
// table (kernels.cc).
#pragma once

#include "emu.h"

namespace hxemu {

// KernelInfo is one entry of the kernel table: the kernel's name, its
// signature (see emu.h) and a wrapper that calls it with unpacked args.
struct KernelInfo {
	const char *name;
	const char *sig;
	void (*invoke)(const hx_emu_arg *args);
};

extern const KernelInfo kKernels[];
extern const int kKernelCount;

} // namespace hxemu
