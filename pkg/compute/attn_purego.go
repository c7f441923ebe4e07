//go:build !cgo || purego

package compute

// vectorAttention is false without cgo: Attention runs the Go kernel.
func vectorAttention() bool { return false }

func attendGroup(*KVCache, int, []int32, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("compute: vector attention without cgo")
}

func attendTileRows(int, int) int { return 0 }

func attendTile(*KVCache, int, []int32, int, int, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("compute: vector attention without cgo")
}

func swigluVec([]float32, []float32, []float32) { panic("compute: vector SwiGLU without cgo") }

// vectorDelta is false without cgo: the delta rule runs the Go kernel.
func vectorDelta(int) bool { return false }

func deltaRowsVec([]float32, int, int, int, int, []float32, []float32, []float32, int, []float32, []float32, []float32, int, float32) {
	panic("compute: vector delta rule without cgo")
}

func convSiLUVec([]float32, []float32, []float32, []float32, int, int, int, int) {
	panic("compute: vector convolution without cgo")
}

func toF16Vec([]uint16, []float32) { panic("compute: vector F16 conversion without cgo") }
