package quant

import "math"

// Block sizes in bytes of the 32-element formats (ggml-common.h):
//
//	block_q4_0 { half d; u8 qs[16]; }                 18 bytes
//	block_q4_1 { half d; half m; u8 qs[16]; }         20 bytes
//	block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }       22 bytes
//	block_q5_1 { half d; half m; u8 qh[4]; u8 qs[16]; } 24 bytes
//	block_q8_0 { half d; i8 qs[32]; }                 34 bytes
//	block_q8_1 { half d; half s; i8 qs[32]; }         36 bytes
//
// Element j (j < 16) of a 4/5-bit block is the low nibble of qs[j], element
// j+16 the high nibble; the 5th bits are bit j and bit j+16 of qh (LE u32).
const (
	bytesQ4_0 = 18
	bytesQ4_1 = 20
	bytesQ5_0 = 22
	bytesQ5_1 = 24
	bytesQ8_0 = 34
	bytesQ8_1 = 36
)

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func dequantQ4_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ4_0]byte)(src[i*bytesQ4_0:])
		y := (*[32]float32)(dst[i*32:])
		d := fp16(b[:], 0)
		for j := 0; j < 16; j++ {
			y[j] = float32(int32(b[2+j]&0x0F)-8) * d
			y[j+16] = float32(int32(b[2+j]>>4)-8) * d
		}
	}
}

func dequantQ4_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ4_1]byte)(src[i*bytesQ4_1:])
		y := (*[32]float32)(dst[i*32:])
		d, m := fp16(b[:], 0), fp16(b[:], 2)
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(b[4+j]&0x0F)*d) + m
			y[j+16] = float32(float32(b[4+j]>>4)*d) + m
		}
	}
}

func dequantQ5_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ5_0]byte)(src[i*bytesQ5_0:])
		y := (*[32]float32)(dst[i*32:])
		d := fp16(b[:], 0)
		qh := le32(b[2:6])
		for j := 0; j < 16; j++ {
			h0 := byte((qh>>uint(j))<<4) & 0x10
			h1 := byte(qh>>uint(j+12)) & 0x10
			y[j] = float32(int32(b[6+j]&0x0F|h0)-16) * d
			y[j+16] = float32(int32(b[6+j]>>4|h1)-16) * d
		}
	}
}

func dequantQ5_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ5_1]byte)(src[i*bytesQ5_1:])
		y := (*[32]float32)(dst[i*32:])
		d, m := fp16(b[:], 0), fp16(b[:], 2)
		qh := le32(b[4:8])
		for j := 0; j < 16; j++ {
			h0 := byte((qh>>uint(j))<<4) & 0x10
			h1 := byte(qh>>uint(j+12)) & 0x10
			y[j] = float32(float32(b[8+j]&0x0F|h0)*d) + m
			y[j+16] = float32(float32(b[8+j]>>4|h1)*d) + m
		}
	}
}

func dequantQ8_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ8_0]byte)(src[i*bytesQ8_0:])
		y := (*[32]float32)(dst[i*32:])
		d := fp16(b[:], 0)
		for j := 0; j < 32; j++ {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

func dequantQ8_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/32; i++ {
		b := (*[bytesQ8_1]byte)(src[i*bytesQ8_1:])
		y := (*[32]float32)(dst[i*32:])
		d := fp16(b[:], 0)
		for j := 0; j < 32; j++ {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
}

// absMax returns the largest |v| and the signed value that has it (the
// first one on ties), as ggml's reference quantizers search.
func absMax(x []float32) (amax, max float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, max = a, v
		}
	}
	return amax, max
}

func abs32(f float32) float32 {
	return math.Float32frombits(math.Float32bits(f) &^ 0x80000000)
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

func clampInt(v, lo, hi int32) int32 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// quantizeQ4_0 is quantize_row_q4_0_ref.
func quantizeQ4_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ4_0]byte)(dst[i*bytesQ4_0:])
		_, max := absMax(x[:])
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		for j := 0; j < 16; j++ {
			x0 := clampInt(int32(float32(x[j]*id)+8.5), 0, 15)
			x1 := clampInt(int32(float32(x[16+j]*id)+8.5), 0, 15)
			b[2+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// quantizeQ4_1 is quantize_row_q4_1_ref.
func quantizeQ4_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ4_1]byte)(dst[i*bytesQ4_1:])
		lo, hi := minMax(x[:])
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		putFP16(b[:], 2, lo)
		for j := 0; j < 16; j++ {
			x0 := clampInt(int32(float32((x[j]-lo)*id)+0.5), 0, 15)
			x1 := clampInt(int32(float32((x[16+j]-lo)*id)+0.5), 0, 15)
			b[4+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// quantizeQ5_0 is quantize_row_q5_0_ref.
func quantizeQ5_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ5_0]byte)(dst[i*bytesQ5_0:])
		_, max := absMax(x[:])
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		var qh uint32
		for j := 0; j < 16; j++ {
			x0 := uint32(clampInt(int32(float32(x[j]*id)+16.5), 0, 31))
			x1 := uint32(clampInt(int32(float32(x[16+j]*id)+16.5), 0, 31))
			b[6+j] = byte(x0&0x0F) | byte(x1&0x0F)<<4
			qh |= (x0 & 0x10) >> 4 << uint(j)
			qh |= (x1 & 0x10) >> 4 << uint(j+16)
		}
		b[2], b[3], b[4], b[5] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
	}
}

// quantizeQ5_1 is quantize_row_q5_1_ref.
func quantizeQ5_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ5_1]byte)(dst[i*bytesQ5_1:])
		lo, hi := minMax(x[:])
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		putFP16(b[:], 2, lo)
		var qh uint32
		for j := 0; j < 16; j++ {
			x0 := uint32(clampInt(int32(float32((x[j]-lo)*id)+0.5), 0, 31))
			x1 := uint32(clampInt(int32(float32((x[16+j]-lo)*id)+0.5), 0, 31))
			b[8+j] = byte(x0&0x0F) | byte(x1&0x0F)<<4
			qh |= (x0 & 0x10) >> 4 << uint(j)
			qh |= (x1 & 0x10) >> 4 << uint(j+16)
		}
		b[4], b[5], b[6], b[7] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
	}
}

// quantizeQ8_0Ref is quantize_row_q8_0_ref (roundf: half away from zero),
// what llama-quantize writes into Q8_0 model files.
func quantizeQ8_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ8_0]byte)(dst[i*bytesQ8_0:])
		amax, _ := absMax(x[:])
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		for j := 0; j < 32; j++ {
			b[2+j] = byte(int8(clampInt(int32(roundAway(x[j]*id)), -128, 127)))
		}
	}
}

// quantizeQ8_1Ref is quantize_row_q8_1_ref.
func quantizeQ8_1Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ8_1]byte)(dst[i*bytesQ8_1:])
		amax, _ := absMax(x[:])
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(b[:], 0, d)
		var sum int32
		for j := 0; j < 32; j++ {
			q := clampInt(int32(roundAway(x[j]*id)), -128, 127)
			b[4+j] = byte(int8(q))
			sum += q
		}
		putFP16(b[:], 2, clampS(float32(sum)*d))
	}
}

// clampS keeps the Q8_1 sum term finite in F16, as quantize_row_q8_1_ref.
func clampS(s float32) float32 {
	return float32(math.Min(65504, math.Max(-65504, float64(s))))
}

// quantizeQ8_0Act is ggml-cpu's x86 (AVX/AVX2) quantize_row_q8_0: the scale
// is 127/max|x| in float32 and rounding is to nearest even.
func quantizeQ8_0Act(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ8_0]byte)(dst[i*bytesQ8_0:])
		amax := maxAbs32(x)
		putFP16(b[:], 0, amax/127)
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for j := 0; j < 32; j++ {
			b[2+j] = byte(int8(clampInt(int32(roundEven(x[j]*id)), -128, 127)))
		}
	}
}

// quantizeQ8_1Act is ggml-cpu's x86 quantize_row_q8_1 (s = d·Σq, clamped
// to the F16 range as the reference does; AVX2 would store ±inf there).
func quantizeQ8_1Act(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[bytesQ8_1]byte)(dst[i*bytesQ8_1:])
		amax := maxAbs32(x)
		d := amax / 127
		putFP16(b[:], 0, d)
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		var sum int32
		for j := 0; j < 32; j++ {
			q := clampInt(int32(roundEven(x[j]*id)), -128, 127)
			b[4+j] = byte(int8(q))
			sum += q
		}
		putFP16(b[:], 2, clampS(d*float32(sum)))
	}
}

func maxAbs32(x *[32]float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}
