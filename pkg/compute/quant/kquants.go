package quant

// Super-block layouts of the K-quants (256 elements, ggml-common.h):
//
//	block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }            84 bytes
//	block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }        110 bytes
//	block_q4_K { half d; half dmin; u8 scales[12]; u8 qs[128]; }          144 bytes
//	block_q5_K { half d; half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; } 176 bytes
//	block_q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; half d; }          210 bytes
//	block_q8_K { f32 d; i8 qs[256]; i16 bsums[16]; }                      292 bytes
const (
	bytesQ2K = 84
	bytesQ3K = 110
	bytesQ4K = 144
	bytesQ5K = 176
	bytesQ6K = 210
	bytesQ8K = 292
)

// scaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min of
// sub-block j (0..7) of a Q4_K/Q5_K block.
func scaleMinK4(j int, q *[12]byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// unpackK4 returns the 8 scales and 8 mins of a Q4_K/Q5_K block.
func unpackK4(q *[12]byte) (sc, mn [8]int32) {
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, q)
		sc[j], mn[j] = int32(s), int32(m)
	}
	return sc, mn
}

// unpackQ3Scales returns the 16 signed 6-bit scales (already minus 32) of a
// Q3_K block, as the kmask shuffling in dequantize_row_q3_K.
func unpackQ3Scales(s *[12]byte) [16]int32 {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	a0, a1, tmp := le32(s[0:4]), le32(s[4:8]), le32(s[8:12])
	aux := [4]uint32{
		(a0 & kmask2) | ((tmp >> 0 & kmask1) << 4),
		(a1 & kmask2) | ((tmp >> 2 & kmask1) << 4),
		(a0 >> 4 & kmask2) | ((tmp >> 4 & kmask1) << 4),
		(a1 >> 4 & kmask2) | ((tmp >> 6 & kmask1) << 4),
	}
	var out [16]int32
	for i := 0; i < 16; i++ {
		out[i] = int32(int8(byte(aux[i/4]>>(8*uint(i%4))))) - 32
	}
	return out
}

func dequantQ2K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ2K]byte)(src[i*bytesQ2K:])
		y := (*[256]float32)(dst[i*256:])
		d, min := fp16(b[:], 80), fp16(b[:], 82)
		for e := 0; e < 256; e++ {
			// element e: 128-half n, shift group g, 16-block within 32
			n, g, l := e/128, (e%128)/32, e%32
			sc := b[e/16]
			dl := float32(d * float32(sc&0xF))
			ml := float32(min * float32(sc>>4))
			q := (b[16+32*n+l] >> (2 * uint(g))) & 3
			y[e] = float32(dl*float32(q)) - ml
		}
	}
}

func dequantQ3K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ3K]byte)(src[i*bytesQ3K:])
		y := (*[256]float32)(dst[i*256:])
		d := fp16(b[:], 108)
		scales := unpackQ3Scales((*[12]byte)(b[96:108]))
		for e := 0; e < 256; e++ {
			n, g, l := e/128, (e%128)/32, e%32
			dl := float32(d * float32(scales[e/16]))
			q := int32(b[32+32*n+l]>>(2*uint(g))) & 3
			if b[l]&(1<<uint(4*n+g)) == 0 {
				q -= 4
			}
			y[e] = dl * float32(q)
		}
	}
}

func dequantQ4K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ4K]byte)(src[i*bytesQ4K:])
		y := (*[256]float32)(dst[i*256:])
		d, min := fp16(b[:], 0), fp16(b[:], 2)
		sc := (*[12]byte)(b[4:16])
		for j := 0; j < 4; j++ {
			s1, m1 := scaleMinK4(2*j, sc)
			s2, m2 := scaleMinK4(2*j+1, sc)
			d1, mm1 := float32(d*float32(s1)), float32(min*float32(m1))
			d2, mm2 := float32(d*float32(s2)), float32(min*float32(m2))
			q := (*[32]byte)(b[16+32*j:])
			for l := 0; l < 32; l++ {
				y[64*j+l] = float32(d1*float32(q[l]&0xF)) - mm1
				y[64*j+32+l] = float32(d2*float32(q[l]>>4)) - mm2
			}
		}
	}
}

func dequantQ5K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ5K]byte)(src[i*bytesQ5K:])
		y := (*[256]float32)(dst[i*256:])
		d, min := fp16(b[:], 0), fp16(b[:], 2)
		sc := (*[12]byte)(b[4:16])
		qh := (*[32]byte)(b[16:48])
		for j := 0; j < 4; j++ {
			s1, m1 := scaleMinK4(2*j, sc)
			s2, m2 := scaleMinK4(2*j+1, sc)
			d1, mm1 := float32(d*float32(s1)), float32(min*float32(m1))
			d2, mm2 := float32(d*float32(s2)), float32(min*float32(m2))
			u1, u2 := byte(1)<<uint(2*j), byte(2)<<uint(2*j)
			q := (*[32]byte)(b[48+32*j:])
			for l := 0; l < 32; l++ {
				lo, hi := q[l]&0xF, q[l]>>4
				if qh[l]&u1 != 0 {
					lo += 16
				}
				if qh[l]&u2 != 0 {
					hi += 16
				}
				y[64*j+l] = float32(d1*float32(lo)) - mm1
				y[64*j+32+l] = float32(d2*float32(hi)) - mm2
			}
		}
	}
}

// q6Value returns element e (0..255) of a Q6_K block as a signed value in
// [-32, 31].
func q6Value(b *[bytesQ6K]byte, e int) int32 {
	h, r := e/128, e%128
	g, l := r/32, r%32
	ql := b[64*h+l+32*(g&1)]
	if g >= 2 {
		ql >>= 4
	}
	qh := (b[128+32*h+l] >> (2 * uint(g))) & 3
	return int32(ql&0xF|qh<<4) - 32
}

func dequantQ6K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ6K]byte)(src[i*bytesQ6K:])
		y := (*[256]float32)(dst[i*256:])
		d := fp16(b[:], 208)
		for e := 0; e < 256; e++ {
			ds := float32(d * float32(int8(b[192+e/16])))
			y[e] = ds * float32(q6Value(b, e))
		}
	}
}

func dequantQ8K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := (*[bytesQ8K]byte)(src[i*bytesQ8K:])
		y := (*[256]float32)(dst[i*256:])
		d := f32at(b[:], 0)
		for j := 0; j < 256; j++ {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
}
