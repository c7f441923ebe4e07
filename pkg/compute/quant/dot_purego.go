//go:build !cgo || purego

package quant

import "github.com/helexa/helexa/pkg/dtype"

// Kernels reports which implementation VecDot uses for quantized weights.
const Kernels = "go"

// KernelPath names the kernels this process runs (the portable Go ones).
func KernelPath() string { return "go" }

// maxLevel is the only level of a build without cgo.
func maxLevel() Level { return LevelPortable }

func fastQuantizeQ8K([]float32, []byte) bool { return false }

func fastQuantizeQ8_0([]float32, []byte) bool { return false }

func vnniCovers(dtype.Type) bool { return false }

func avx2Covers(dtype.Type) bool { return false }

func fastRows(Level, dtype.Type, []byte, int, int, []byte, int, int, int, []float32, int) bool {
	return false
}

func quantDot(t dtype.Type, w, xq []byte, n int) float32 { return goQuantDot(t, w, xq, n) }

func dotRows(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, n int, out []float32) {
	goDotRows(t, w, rowBytes, nRows, xq, n, out)
}

func dotRowsMulti(t dtype.Type, w []byte, rowBytes, nRows int, xq []byte, xStride, nX, n int, out []float32, outStride int) {
	goDotRowsMulti(t, w, rowBytes, nRows, xq, xStride, nX, n, out, outStride)
}

// packGroupBytes is 0: nothing packs without the C kernels.
func packGroupBytes(dtype.Type, int) int { return 0 }

func packGroups(dtype.Type, []byte, int, int, int, []byte) {}

func packedRows(dtype.Type, []byte, int, []byte, int, int, int, []float32, int) bool { return false }
