package quant

// quantizeQ3K is quantize_row_q3_K_ref.
func quantizeQ3K(src []float32, dst []byte) {
	var L [256]int8
	var scales [16]float32
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ3K]byte)(dst[i*bytesQ3K:])
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		sc := b[96:108]
		for j := range sc {
			sc[j] = 0
		}
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := byte(clampInt(int32(int8(nearestInt(iscale*scales[j]))), -32, 31) + 32)
				if j < 8 {
					sc[j] = l & 0xF
				} else {
					sc[j-8] |= (l & 0xF) << 4
				}
				l >>= 4
				sc[j%4+8] |= l << (2 * uint(j/4))
			}
			putFP16(b[:], 108, 1/iscale)
		} else {
			putFP16(b[:], 108, 0)
		}
		dAll := fp16(b[:], 108)
		for j := 0; j < 16; j++ {
			var s byte
			if j < 8 {
				s = sc[j] & 0xF
			} else {
				s = sc[j-8] >> 4
			}
			sv := int32(s|((sc[8+j%4]>>(2*uint(j/4)))&3)<<4) - 32
			d := dAll * float32(sv)
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -4, 3) + 4)
			}
		}
		hm := b[0:32]
		for j := range hm {
			hm[j] = 0
		}
		m, h := 0, byte(1)
		for j := 0; j < 256; j++ {
			if L[j] > 3 {
				hm[m] |= h
				L[j] -= 4
			}
			if m++; m == 32 {
				m, h = 0, h<<1
			}
		}
		for j := 0; j < 256; j += 128 {
			for l := 0; l < 32; l++ {
				b[32+j/4+l] = byte(L[j+l]) | byte(L[j+l+32])<<2 | byte(L[j+l+64])<<4 | byte(L[j+l+96])<<6
			}
		}
	}
}

// packScalesK4 stores 8 six-bit scales and mins as quantize_row_q4_K_ref.
func packScalesK4(sc []byte, ls, lm *[8]uint8) {
	for j := 0; j < 8; j++ {
		if j < 4 {
			sc[j] = ls[j]
			sc[j+4] = lm[j]
		} else {
			sc[j+4] = ls[j]&0xF | (lm[j]&0xF)<<4
			sc[j-4] |= (ls[j] >> 4) << 6
			sc[j] |= (lm[j] >> 4) << 6
		}
	}
}

// quantizeK45 is the shared body of quantize_row_q4_K_ref (nmax 15) and
// quantize_row_q5_K_ref (nmax 31): it fills d, dmin and the scales of b and
// returns the per-element levels.
func quantizeK45(x *[256]float32, b []byte, nmax int32, rmin, rdelta float32, nstep int, L *[256]uint8) {
	var laux [32]uint8
	var weights [32]float32
	var mins, scales [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += v * v
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, rdelta, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	sc := (*[12]byte)(b[4:16])
	packScalesK4(sc[:], &ls, &lm)
	putFP16(b, 0, maxScale/63)
	putFP16(b, 2, maxMin/63)
	dAll, mAll := fp16(b, 0), fp16(b, 2)
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, sc)
		d := dAll * float32(s)
		if d == 0 {
			continue
		}
		dm := mAll * float32(m)
		for ii := 0; ii < 32; ii++ {
			L[32*j+ii] = uint8(clampInt(nearestInt((x[32*j+ii]+dm)/d), 0, nmax))
		}
	}
}

// quantizeQ4K is quantize_row_q4_K_ref.
func quantizeQ4K(src []float32, dst []byte) {
	var L [256]uint8
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ4K]byte)(dst[i*bytesQ4K:])
		quantizeK45(x, b[:], 15, -1, 0.1, 20, &L)
		for j := 0; j < 4; j++ {
			for l := 0; l < 32; l++ {
				b[16+32*j+l] = L[64*j+l] | L[64*j+l+32]<<4
			}
		}
	}
}

// quantizeQ5K is quantize_row_q5_K_ref.
func quantizeQ5K(src []float32, dst []byte) {
	var L [256]uint8
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ5K]byte)(dst[i*bytesQ5K:])
		quantizeK45(x, b[:], 31, -0.5, 0.1, 15, &L)
		qh := b[16:48]
		for j := range qh {
			qh[j] = 0
		}
		m1, m2 := byte(1), byte(2)
		for n := 0; n < 4; n++ {
			for j := 0; j < 32; j++ {
				l1, l2 := L[64*n+j], L[64*n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				b[48+32*n+j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
		}
	}
}

// quantizeQ6K is quantize_row_q6_K_ref.
func quantizeQ6K(src []float32, dst []byte) {
	var L [256]int8
	var scales [16]float32
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ6K]byte)(dst[i*bytesQ6K:])
		var maxScale, maxAbs float32
		for ib := 0; ib < 16; ib++ {
			scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
			if a := abs32(scales[ib]); a > maxAbs {
				maxAbs, maxScale = a, scales[ib]
			}
		}
		if maxAbs < groupMaxEps {
			for j := range b {
				b[j] = 0
			}
			continue
		}
		iscale := -128 / maxScale
		putFP16(b[:], 208, 1/iscale)
		for ib := 0; ib < 16; ib++ {
			b[192+ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		dAll := fp16(b[:], 208)
		for j := 0; j < 16; j++ {
			d := dAll * float32(int8(b[192+j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -32, 31) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql := b[64*h : 64*h+64]
			qh := b[128+32*h : 128+32*h+32]
			Lh := L[128*h : 128*h+128]
			for l := 0; l < 32; l++ {
				q1, q2 := byte(Lh[l])&0xF, byte(Lh[l+32])&0xF
				q3, q4 := byte(Lh[l+64])&0xF, byte(Lh[l+96])&0xF
				ql[l] = q1 | q3<<4
				ql[l+32] = q2 | q4<<4
				qh[l] = byte(Lh[l])>>4 | (byte(Lh[l+32])>>4)<<2 | (byte(Lh[l+64])>>4)<<4 | (byte(Lh[l+96])>>4)<<6
			}
		}
	}
}

// quantizeQ8K is quantize_row_q8_K_ref, which ggml-cpu also uses for
// activations on x86: d = 1/iscale with iscale = -127/max (max the signed
// value of largest magnitude), q = min(127, nearest_int(iscale·x)).
func quantizeQ8K(src []float32, dst []byte) {
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ8K]byte)(dst[i*bytesQ8K:])
		var amax, max float32
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, max = a, v
			}
		}
		if amax == 0 {
			for j := range b {
				b[j] = 0
			}
			continue
		}
		iscale := -127 / max
		q := (*[256]byte)(b[4:260])
		for j, v := range x {
			q[j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := 0; j < 16; j++ {
			var s int32
			for ii := 0; ii < 16; ii++ {
				s += int32(int8(q[16*j+ii]))
			}
			b[260+2*j] = byte(s)
			b[261+2*j] = byte(s >> 8)
		}
		putF32(b[:], 0, 1/iscale)
	}
}
