package quant

import (
	"encoding/binary"
	"math"
)

func convertF16(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToFP16(v))
	}
}

func convertBF16(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToBF16(v))
	}
}

// dotF32 follows ggml_vec_dot_f32's scalar path: float products summed in
// double precision.
func dotF32(w, x []byte, n int) float32 {
	w = w[:4*n]
	x = x[:4*n]
	var sum float64
	for i := 0; i+4 <= len(w) && i+4 <= len(x); i += 4 {
		a := math.Float32frombits(binary.LittleEndian.Uint32(w[i:]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(x[i:]))
		sum += float64(float32(a * b))
	}
	return float32(sum)
}

// dotF16 follows ggml_vec_dot_f16's scalar path.
func dotF16(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:2*n]
	var sum float64
	for i := 0; i+2 <= len(w) && i+2 <= len(x); i += 2 {
		a := FP16ToFloat32(binary.LittleEndian.Uint16(w[i:]))
		b := FP16ToFloat32(binary.LittleEndian.Uint16(x[i:]))
		sum += float64(float32(a * b))
	}
	return float32(sum)
}

// dotBF16 follows ggml_vec_dot_bf16's scalar path.
func dotBF16(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:2*n]
	var sum float64
	for i := 0; i+2 <= len(w) && i+2 <= len(x); i += 2 {
		a := BF16ToFloat32(binary.LittleEndian.Uint16(w[i:]))
		b := BF16ToFloat32(binary.LittleEndian.Uint16(x[i:]))
		sum += float64(float32(a * b))
	}
	return float32(sum)
}
