package cuda

import (
	"fmt"
	"math"
)

// args packs a kernel's parameters for cuLaunchKernel, which reads each
// one from behind a pointer of its own: every value sits in an 8-byte slot
// (device pointers whole, 32-bit ints and floats in the low bytes, which
// is where a little-endian reader finds them), and the launch passes a
// pointer to each slot.
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

// threads is the block size of the element-wise kernels.
const threads = 256

// grid1D is the number of blocks of threads covering n elements (at
// least one, so that an empty launch is still a valid launch).
func grid1D(n int) int { return max(1, (n+threads-1)/threads) }
