package quant

import "math"

// FP16ToFloat32 converts an IEEE binary16 value to float32 (exact for all
// finite values and infinities; NaNs stay NaN). It is ggml's branch-free
// ggml_compute_fp16_to_fp32.
func FP16ToFloat32(h uint16) float32 {
	twoW := uint32(h) << 17 // exponent and mantissa, sign shifted out
	r := math.Float32bits(float32(math.Float32frombits((twoW>>4)+0xE0<<23) * 0x1p-112))
	if twoW < 1<<27 { // zero or subnormal half
		r = math.Float32bits(float32(math.Float32frombits((twoW>>17)|126<<23) - 0.5))
	}
	return math.Float32frombits(uint32(h&0x8000)<<16 | r)
}

// Float32ToFP16 converts f to IEEE binary16 with round-to-nearest-even,
// exactly as ggml's ggml_compute_fp32_to_fp16: overflow gives ±inf,
// subnormal halves are produced correctly, and every NaN becomes the quiet
// NaN 0x7E00 with f's sign.
func Float32ToFP16(f float32) uint16 {
	const scaleToInf = 0x1.0p+112
	const scaleToZero = 0x1.0p-110
	af := math.Float32frombits(math.Float32bits(f) &^ 0x80000000)
	base := float32(float32(af*scaleToInf) * scaleToZero)
	w := math.Float32bits(f)
	shl1w := w + w
	sign := w & 0x80000000
	bias := shl1w & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = float32(math.Float32frombits((bias>>1)+0x07800000) + base)
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantBits := bits & 0x00000FFF
	nonsign := expBits + mantBits
	if shl1w > 0xFF000000 {
		return uint16(sign>>16) | 0x7E00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

// BF16ToFloat32 converts a bfloat16 value to float32 (exact).
func BF16ToFloat32(b uint16) float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// Float32ToBF16 converts f to bfloat16 as ggml's ggml_compute_fp32_to_bf16:
// round-to-nearest-even, subnormals kept (not flushed), NaN made quiet by
// setting bit 6 of the result (sign and upper payload kept).
func Float32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + ((u >> 16) & 1))) >> 16)
}

// nearestInt rounds to the nearest integer, ties to even, as ggml's
// nearest_int (valid for |f| <= 4194303).
func nearestInt(f float32) int32 {
	v := float32(f + 12582912.0)
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// roundAway rounds half away from zero, as C's roundf.
func roundAway(f float32) float32 {
	return float32(math.Round(float64(f)))
}

// roundEven rounds half to even, as _mm256_round_ps(_MM_ROUND_NEAREST).
func roundEven(f float32) float32 {
	return float32(math.RoundToEven(float64(f)))
}

func fp16(b []byte, off int) float32 {
	return FP16ToFloat32(uint16(b[off]) | uint16(b[off+1])<<8)
}

func putFP16(b []byte, off int, f float32) {
	h := Float32ToFP16(f)
	b[off] = byte(h)
	b[off+1] = byte(h >> 8)
}

func f32at(b []byte, off int) float32 {
	return math.Float32frombits(uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24)
}

func putF32(b []byte, off int, f float32) {
	u := math.Float32bits(f)
	b[off] = byte(u)
	b[off+1] = byte(u >> 8)
	b[off+2] = byte(u >> 16)
	b[off+3] = byte(u >> 24)
}
