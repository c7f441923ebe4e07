//go:build !cgo || purego

package cpu

// vectorAttention is vecNone without cgo: Attention runs the Go kernel.
func vectorAttention() vecISA { return vecNone }

func cpuVecISA() vecISA { return vecNone }

func attendGroup(vecISA, *KVCache, int, []int32, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("cpu: vector attention without cgo")
}

func attendTileRows(int, int) int { return 0 }

func attendTile(vecISA, *KVCache, int, []int32, int, int, int, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("cpu: vector attention without cgo")
}

func swigluVec(vecISA, []float32, []float32, []float32) { panic("cpu: vector SwiGLU without cgo") }

// vectorDelta is false without cgo: the delta rule runs the Go kernel.
func vectorDelta(int) bool { return false }

func deltaRowsVec([]float32, int, int, int, int, []float32, []float32, []float32, int, []float32, []float32, []float32, int, float32) {
	panic("cpu: vector delta rule without cgo")
}

func convSiLUVec([]float32, []float32, []float32, []float32, int, int, int, int) {
	panic("cpu: vector convolution without cgo")
}

func toF16Vec(vecISA, []uint16, []float32) { panic("cpu: vector F16 conversion without cgo") }

func rmsNormVec([]float32, []float32, []float32, int, int, float32) {
	panic("cpu: vector RMSNorm without cgo")
}

func addVec([]float32, []float32) { panic("cpu: vector add without cgo") }

func ropeVec([]float32, int, int, int, []float32, int, bool) {
	panic("cpu: vector RoPE without cgo")
}
