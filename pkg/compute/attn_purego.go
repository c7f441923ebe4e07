//go:build !cgo || purego

package compute

// vectorAttention is vecNone without cgo: Attention runs the Go kernel.
func vectorAttention() vecISA { return vecNone }

func cpuVecISA() vecISA { return vecNone }

func attendGroup(vecISA, *KVCache, int, []int32, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("compute: vector attention without cgo")
}

func attendTileRows(int, int) int { return 0 }

func attendTile(vecISA, *KVCache, int, []int32, int, int, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("compute: vector attention without cgo")
}

func swigluVec(vecISA, []float32, []float32, []float32) { panic("compute: vector SwiGLU without cgo") }

// vectorDelta is false without cgo: the delta rule runs the Go kernel.
func vectorDelta(int) bool { return false }

func deltaRowsVec([]float32, int, int, int, int, []float32, []float32, []float32, int, []float32, []float32, []float32, int, float32) {
	panic("compute: vector delta rule without cgo")
}

func convSiLUVec([]float32, []float32, []float32, []float32, int, int, int, int) {
	panic("compute: vector convolution without cgo")
}

func toF16Vec(vecISA, []uint16, []float32) { panic("compute: vector F16 conversion without cgo") }

func rmsNormVec([]float32, []float32, []float32, int, int, float32) {
	panic("compute: vector RMSNorm without cgo")
}

func addVec([]float32, []float32) { panic("compute: vector add without cgo") }

func ropeVec([]float32, int, int, int, []float32, int, bool) {
	panic("compute: vector RoPE without cgo")
}
