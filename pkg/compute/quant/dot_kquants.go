package quant

// The K-quant dot products follow ggml-cpu's ggml_vec_dot_q*_K_q8_K_generic:
// each super-block is unpacked into 256 small signed integers, integer
// products are accumulated per lane (element index mod 8) with the
// sub-block scale, and the lanes are scaled by d and summed in float32 in
// the same order as the C code (Q2_K: one float update per super-block).

// laneDot16 accumulates, for each of the 16 sub-blocks of 16 elements,
// scale·q8·a into the 8 lanes.
func laneDot16(aux *[8]int32, a *[256]int8, q8 *[256]byte, scales *[16]int32) {
	for j := 0; j < 16; j++ {
		s := scales[j]
		qa := (*[16]int8)(a[16*j:])
		qx := (*[16]byte)(q8[16*j:])
		for k := 0; k < 8; k++ {
			p := int32(int8(qx[k]))*int32(qa[k]) + int32(int8(qx[k+8]))*int32(qa[k+8])
			aux[k] += s * p
		}
	}
}

// finishLanes adds d·lane to the 8 float lane sums.
func finishLanes(sums *[8]float32, d float32, aux *[8]int32) {
	for l := 0; l < 8; l++ {
		sums[l] += float32(d * float32(aux[l]))
	}
}

// bsumsMins returns Σ bsums[j]·mins[j/2] for a Q4_K/Q5_K block.
func bsumsMins(xb *[bytesQ8K]byte, mn *[8]int32) int32 {
	var s int32
	for j := 0; j < 16; j++ {
		bs := int32(int16(uint16(xb[260+2*j]) | uint16(xb[261+2*j])<<8))
		s += bs * mn[j/2]
	}
	return s
}

func dotQ2K(w, x []byte, nb int) float32 {
	var sumf float32
	var a [256]int8
	var scales [16]int32
	for i := 0; i < nb; i++ {
		wb := (*[bytesQ2K]byte)(w[i*bytesQ2K:])
		xb := (*[bytesQ8K]byte)(x[i*bytesQ8K:])
		var summs int32
		for j := 0; j < 16; j++ {
			bs := int32(int16(uint16(xb[260+2*j]) | uint16(xb[261+2*j])<<8))
			summs += bs * int32(wb[j]>>4)
			scales[j] = int32(wb[j] & 0xF)
		}
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(wb[16+32*n:])
			for g := 0; g < 4; g++ {
				o := (*[32]int8)(a[128*n+32*g:])
				sh := 2 * uint(g)
				for l := 0; l < 32; l++ {
					o[l] = int8(q[l] >> sh & 3)
				}
			}
		}
		var aux [8]int32
		laneDot16(&aux, &a, (*[256]byte)(xb[4:260]), &scales)
		isum := aux[0] + aux[1] + aux[2] + aux[3] + aux[4] + aux[5] + aux[6] + aux[7]
		yd := f32at(xb[:], 0)
		dall := float32(yd * fp16(wb[:], 80))
		dmin := float32(yd * fp16(wb[:], 82))
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}

func dotQ3K(w, x []byte, nb int) float32 {
	var sums [8]float32
	var a [256]int8
	for i := 0; i < nb; i++ {
		wb := (*[bytesQ3K]byte)(w[i*bytesQ3K:])
		xb := (*[bytesQ8K]byte)(x[i*bytesQ8K:])
		hm := (*[32]byte)(wb[0:32])
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(wb[32+32*n:])
			for g := 0; g < 4; g++ {
				o := (*[32]int8)(a[128*n+32*g:])
				sh := 2 * uint(g)
				m := byte(1) << uint(4*n+g)
				for l := 0; l < 32; l++ {
					v := int8(q[l] >> sh & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					o[l] = v
				}
			}
		}
		scales := unpackQ3Scales((*[12]byte)(wb[96:108]))
		var aux [8]int32
		laneDot16(&aux, &a, (*[256]byte)(xb[4:260]), &scales)
		d := float32(fp16(wb[:], 108) * f32at(xb[:], 0))
		finishLanes(&sums, d, &aux)
	}
	var sumf float32
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}

func dotQ4K(w, x []byte, nb int) float32 {
	var sums [8]float32
	var sumf float32
	var a [256]int8
	for i := 0; i < nb; i++ {
		wb := (*[bytesQ4K]byte)(w[i*bytesQ4K:])
		xb := (*[bytesQ8K]byte)(x[i*bytesQ8K:])
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(wb[16+32*j:])
			lo := (*[32]int8)(a[64*j:])
			hi := (*[32]int8)(a[64*j+32:])
			for l := 0; l < 32; l++ {
				lo[l] = int8(q[l] & 0xF)
				hi[l] = int8(q[l] >> 4)
			}
		}
		sc, mn := unpackK4((*[12]byte)(wb[4:16]))
		sumi := bsumsMins(xb, &mn)
		var scales [16]int32
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = sc[j], sc[j]
		}
		var aux [8]int32
		laneDot16(&aux, &a, (*[256]byte)(xb[4:260]), &scales)
		yd := f32at(xb[:], 0)
		finishLanes(&sums, float32(fp16(wb[:], 0)*yd), &aux)
		dmin := float32(fp16(wb[:], 2) * yd)
		sumf -= float32(dmin * float32(sumi))
	}
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}

func dotQ5K(w, x []byte, nb int) float32 {
	var sums [8]float32
	var sumf float32
	var a [256]int8
	for i := 0; i < nb; i++ {
		wb := (*[bytesQ5K]byte)(w[i*bytesQ5K:])
		xb := (*[bytesQ8K]byte)(x[i*bytesQ8K:])
		qh := (*[32]byte)(wb[16:48])
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(wb[48+32*j:])
			lo := (*[32]int8)(a[64*j:])
			hi := (*[32]int8)(a[64*j+32:])
			u1, u2 := byte(1)<<uint(2*j), byte(2)<<uint(2*j)
			for l := 0; l < 32; l++ {
				vl, vh := int8(q[l]&0xF), int8(q[l]>>4)
				if qh[l]&u1 != 0 {
					vl += 16
				}
				if qh[l]&u2 != 0 {
					vh += 16
				}
				lo[l], hi[l] = vl, vh
			}
		}
		sc, mn := unpackK4((*[12]byte)(wb[4:16]))
		sumi := bsumsMins(xb, &mn)
		var scales [16]int32
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = sc[j], sc[j]
		}
		var aux [8]int32
		laneDot16(&aux, &a, (*[256]byte)(xb[4:260]), &scales)
		yd := f32at(xb[:], 0)
		finishLanes(&sums, float32(fp16(wb[:], 0)*yd), &aux)
		dmin := float32(fp16(wb[:], 2) * yd)
		sumf -= float32(dmin * float32(sumi))
	}
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}

func dotQ6K(w, x []byte, nb int) float32 {
	var sums [8]float32
	var a [256]int8
	for i := 0; i < nb; i++ {
		wb := (*[bytesQ6K]byte)(w[i*bytesQ6K:])
		xb := (*[bytesQ8K]byte)(x[i*bytesQ8K:])
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(wb[64*h:])
			qh := (*[32]byte)(wb[128+32*h:])
			o := (*[128]int8)(a[128*h:])
			for l := 0; l < 32; l++ {
				hb := qh[l]
				o[l] = int8(ql[l]&0xF|(hb&3)<<4) - 32
				o[l+32] = int8(ql[l+32]&0xF|(hb>>2&3)<<4) - 32
				o[l+64] = int8(ql[l]>>4|(hb>>4&3)<<4) - 32
				o[l+96] = int8(ql[l+32]>>4|(hb>>6&3)<<4) - 32
			}
		}
		var scales [16]int32
		for j := 0; j < 16; j++ {
			scales[j] = int32(int8(wb[192+j]))
		}
		var aux [8]int32
		laneDot16(&aux, &a, (*[256]byte)(xb[4:260]), &scales)
		d := float32(fp16(wb[:], 208) * f32at(xb[:], 0))
		finishLanes(&sums, d, &aux)
	}
	var sumf float32
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}
