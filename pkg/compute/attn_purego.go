//go:build !cgo || purego

package compute

// vectorAttention is false without cgo: Attention runs the Go kernel.
func vectorAttention() bool { return false }

func attendGroup(*KVCache, int, []int32, int, int, int, int, float32, []float32, []float32, []float32) {
	panic("compute: vector attention without cgo")
}

func swigluVec([]float32, []float32, []float32) { panic("compute: vector SwiGLU without cgo") }
