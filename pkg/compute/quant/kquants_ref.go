package quant

import "math"

// Ports of ggml's reference K-quant quantizers (ggml-quants.c,
// quantize_row_q*_K_ref and their helpers), used without an importance
// matrix exactly as llama-quantize does.

const groupMaxEps = 1e-15

func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// makeQXQuants is make_qx_quants with qw == NULL (weights x²) for
// rmse_type 1, the only mode the reference quantizers use.
func makeQXQuants(nmax int32, x []float32, L []int8) float32 {
	var amax, max float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, max = a, v
		}
	}
	if amax < groupMaxEps {
		for i := range L[:len(x)] {
			L[i] = 0
		}
		return 0
	}
	fn := float32(nmax)
	iscale := -fn / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := v * v
		sumlx += w * v * float32(l)
		suml2 += w * float32(l) * float32(l)
	}
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fn + 0.1*float32(is)) / max
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			w := v * v
			sumlx += w * v * float32(l)
			suml2 += w * float32(l) * float32(l)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				l := nearestInt(iscale * v)
				L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse = true.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	var amax, max float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, max = a, v
		}
	}
	if amax < groupMaxEps {
		for i := range L[:len(x)] {
			L[i] = 0
		}
		return 0
	}
	iscale := -float32(nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		sumlx += w * v * float32(l)
		suml2 += w * float32(l) * float32(l)
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - w*v*li
			if slx > 0 {
				sl2 := suml2 - w*li*li
				nl := clampInt(nearestInt(v*sl2/slx), -nmax, nmax-1)
				if nl != int32(L[i]) {
					slx += w * v * float32(nl)
					sl2 += w * float32(nl) * float32(nl)
					if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is make_qkx2_quants: an asymmetric (scale, min) search.
// It returns the scale and -min.
func makeQKX2Quants(nmax int32, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (float32, float32) {
	n := len(x)
	min, max := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += w * x[i]
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0, -min
	}
	errOf := func(diff float32) float32 {
		if useMAD {
			return abs32(diff)
		}
		return diff * diff
	}
	fn := float32(nmax)
	iscale := fn / (max - min)
	scale := 1 / iscale
	var bestErr float32
	for i := 0; i < n; i++ {
		l := clampInt(nearestInt(iscale*(x[i]-min)), 0, nmax)
		L[i] = uint8(l)
		bestErr += weights[i] * errOf(scale*float32(l)+min-x[i])
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + rdelta*float32(is) + fn) / (max - min)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			l := clampInt(nearestInt(iscale*(x[i]-min)), 0, nmax)
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += w * fl
			sumL2 += w * fl * fl
			sumXL += w * fl * x[i]
		}
		D := sumW*sumL2 - sumL*sumL
		if D > 0 {
			thisScale := (sumW*sumXL - sumX*sumL) / D
			thisMin := (sumL2*sumX - sumL*sumXL) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var cur float32
			for i := 0; i < n; i++ {
				cur += weights[i] * errOf(thisScale*float32(Laux[i])+thisMin-x[i])
			}
			if cur < bestErr {
				copy(L[:n], Laux[:n])
				bestErr = cur
				scale = thisScale
				min = thisMin
			}
		}
	}
	return scale, -min
}

// quantizeQ2K is quantize_row_q2_K_ref.
func quantizeQ2K(src []float32, dst []byte) {
	var L [256]uint8
	var laux [16]uint8
	var weights [16]float32
	var mins, scales [16]float32
	const q4scale = 15
	for i := 0; i < len(src)/256; i++ {
		x := (*[256]float32)(src[i*256:])
		b := (*[bytesQ2K]byte)(dst[i*bytesQ2K:])
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			for l := 0; l < 16; l++ {
				weights[l] = abs32(x[16*j+l])
			}
			scales[j], mins[j] = makeQKX2Quants(3, x[16*j:16*j+16], weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			maxScale = max(maxScale, scales[j])
			maxMin = max(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := 0; j < 16; j++ {
				b[j] = byte(nearestInt(iscale * scales[j]))
			}
			putFP16(b[:], 80, maxScale/q4scale)
		} else {
			for j := 0; j < 16; j++ {
				b[j] = 0
			}
			putFP16(b[:], 80, 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := 0; j < 16; j++ {
				b[j] |= byte(nearestInt(iscale*mins[j]) << 4)
			}
			putFP16(b[:], 82, maxMin/q4scale)
		} else {
			putFP16(b[:], 82, 0)
		}
		dAll, mAll := fp16(b[:], 80), fp16(b[:], 82)
		for j := 0; j < 16; j++ {
			d := dAll * float32(b[j]&0xF)
			if d == 0 {
				continue
			}
			dm := mAll * float32(b[j]>>4)
			for ii := 0; ii < 16; ii++ {
				L[16*j+ii] = uint8(clampInt(nearestInt((x[16*j+ii]+dm)/d), 0, 3))
			}
		}
		for j := 0; j < 256; j += 128 {
			for l := 0; l < 32; l++ {
				b[16+j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
			}
		}
	}
}
