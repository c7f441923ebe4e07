package cuda

import (
	"fmt"
	"math"
	"unsafe"
)

// args packs a kernel's parameters the way gorgonia.org/cu's Launch
// passes them to cuLaunchKernel: it copies 8 bytes from behind each
// parameter pointer, so every value sits in an 8-byte slot of its own
// (device pointers whole, 32-bit ints and floats in the low bytes, which
// is where a little-endian kernel reads them).
type args struct {
	slots []uint64
}

func newArgs(n int) *args { return &args{slots: make([]uint64, 0, n)} }

// ptr appends a device pointer (0 is a null pointer).
func (a *args) ptr(p devPtr) *args {
	a.slots = append(a.slots, uint64(p))
	return a
}

// i32 appends an int parameter; a value outside int32 is a planning bug.
func (a *args) i32(v int) *args {
	if v < math.MinInt32 || v > math.MaxInt32 {
		panic(fmt.Sprintf("cuda: kernel int parameter %d out of range", v))
	}
	a.slots = append(a.slots, uint64(uint32(int32(v))))
	return a
}

// f32 appends a float parameter.
func (a *args) f32(v float32) *args {
	a.slots = append(a.slots, uint64(math.Float32bits(v)))
	return a
}

// pointers is the kernelParams array: a pointer to each slot. The slots
// must not grow afterwards.
func (a *args) pointers() []unsafe.Pointer {
	ps := make([]unsafe.Pointer, len(a.slots))
	for i := range a.slots {
		ps[i] = unsafe.Pointer(&a.slots[i])
	}
	return ps
}

// threads is the block size of the element-wise kernels.
const threads = 256

// grid1D is the number of blocks of threads covering n elements (at
// least one, so that an empty launch is still a valid launch).
func grid1D(n int) int { return max(1, (n+threads-1)/threads) }
