package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
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
	if a, ok := viewF32(w); ok {
		if b, ok := viewF32(x); ok {
			b = b[:len(a)]
			for i, v := range a {
				sum += float64(float32(v * b[i]))
			}
			return float32(sum)
		}
	}
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
	if a, ok := viewU16(w); ok {
		if b, ok := viewU16(x); ok {
			b = b[:len(a)]
			for i, v := range a {
				sum += float64(float32(FP16ToFloat32(v) * FP16ToFloat32(b[i])))
			}
			return float32(sum)
		}
	}
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
	if a, ok := viewU16(w); ok {
		if b, ok := viewU16(x); ok {
			b = b[:len(a)]
			for i, v := range a {
				sum += float64(float32(BF16ToFloat32(v) * BF16ToFloat32(b[i])))
			}
			return float32(sum)
		}
	}
	for i := 0; i+2 <= len(w) && i+2 <= len(x); i += 2 {
		a := BF16ToFloat32(binary.LittleEndian.Uint16(w[i:]))
		b := BF16ToFloat32(binary.LittleEndian.Uint16(x[i:]))
		sum += float64(float32(a * b))
	}
	return float32(sum)
}

// hostLittleEndian reports whether the host stores numbers little-endian,
// as GGUF does; only then can file bytes be read in place as numbers.
func hostLittleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// viewF32 reinterprets little-endian float32 bytes in place (no copy). It
// fails on a big-endian host or a misaligned buffer, where callers decode
// with encoding/binary instead.
func viewF32(b []byte) ([]float32, bool) {
	if len(b) < 4 || !hostLittleEndian() || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), true
}

// viewU16 reinterprets little-endian 16-bit values in place, as viewF32.
func viewU16(b []byte) ([]uint16, bool) {
	if len(b) < 2 || !hostLittleEndian() || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%2 != 0 {
		return nil, false
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2), true
}
