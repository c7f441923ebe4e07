// Package emu runs helexa's CUDA kernels (pkg/compute/cuda/kernels) on the CPU, to
// test them without a GPU: cgo compiles the same .cu sources nvcc compiles,
// with g++ through a shim header (cuda_emu.h) that implements the CUDA
// built-ins they use. A launch runs its blocks one after another; the
// threads of a block are fibers switched at barriers (__syncthreads, warp
// shuffles), so the emulator checks what a GPU would leave undefined: a
// shuffle some lanes of a warp miss, a __syncthreads some threads never
// reach, and (through guard pages) reads and writes past the end of a
// buffer. It is far slower than a GPU: tests keep sizes small.
//
// Two ways to launch: Launch takes Go slices, copied to emulator memory
// for the call (kernel tests); LaunchRaw takes 64-bit argument slots as a
// CUDA launch does, with addresses of memory from Alloc (a backend whose
// device is the emulator).
//
// Kernel sources changed without scripts/build-ptx.sh leave this package
// compiled from the old ones (cgo does not see the .cu files it includes);
// SourceHash says which sources it was compiled from, and the tests compare
// it with the sources on disk.
//
// Without cgo the package builds, but every launch and allocation fails
// (and its tests skip).
package emu

// Arg is an argument of Launch: []float32, []int32, []uint16, []byte or
// []uint64 for a pointer parameter of that element type (nil, typed or
// not, for a null pointer), int or int32 for an int, float32 or float64
// for a float.
type Arg any
