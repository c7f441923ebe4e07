package quant

// The 32-element dot products follow ggml-cpu's ggml_vec_dot_*_generic:
// exact integer sums per block, then one float update per block with the
// same association as the C expression (explicit float32 conversions keep
// the compiler from fusing a multiply and an add).

func dotQ4_0(w, x []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		wb := (*[bytesQ4_0]byte)(w[ib*bytesQ4_0:])
		xb := (*[bytesQ8_0]byte)(x[ib*bytesQ8_0:])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			q := wb[2+j]
			s0 += (int32(q&0x0F) - 8) * int32(int8(xb[2+j]))
			s1 += (int32(q>>4) - 8) * int32(int8(xb[18+j]))
		}
		p := float32(float32(s0+s1) * fp16(wb[:], 0))
		sumf += float32(p * fp16(xb[:], 0))
	}
	return sumf
}

func dotQ4_1(w, x []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		wb := (*[bytesQ4_1]byte)(w[ib*bytesQ4_1:])
		xb := (*[bytesQ8_1]byte)(x[ib*bytesQ8_1:])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			q := wb[4+j]
			s0 += int32(q&0x0F) * int32(int8(xb[4+j]))
			s1 += int32(q>>4) * int32(int8(xb[20+j]))
		}
		dd := float32(fp16(wb[:], 0) * fp16(xb[:], 0))
		a := float32(dd * float32(s0+s1))
		m := float32(fp16(wb[:], 2) * fp16(xb[:], 2))
		sumf += float32(a + m)
	}
	return sumf
}

func dotQ5_0(w, x []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		wb := (*[bytesQ5_0]byte)(w[ib*bytesQ5_0:])
		xb := (*[bytesQ8_0]byte)(x[ib*bytesQ8_0:])
		qh := le32(wb[2:6])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			q := wb[6+j]
			h0 := int32(qh>>uint(j)&1) << 4
			h1 := int32(qh>>uint(j+16)&1) << 4
			s0 += (int32(q&0x0F) | h0 - 16) * int32(int8(xb[2+j]))
			s1 += (int32(q>>4) | h1 - 16) * int32(int8(xb[18+j]))
		}
		dd := float32(fp16(wb[:], 0) * fp16(xb[:], 0))
		sumf += float32(dd * float32(s0+s1))
	}
	return sumf
}

func dotQ5_1(w, x []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		wb := (*[bytesQ5_1]byte)(w[ib*bytesQ5_1:])
		xb := (*[bytesQ8_1]byte)(x[ib*bytesQ8_1:])
		qh := le32(wb[4:8])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			q := wb[8+j]
			h0 := int32(qh>>uint(j)&1) << 4
			h1 := int32(qh>>uint(j+16)&1) << 4
			s0 += (int32(q&0x0F) | h0) * int32(int8(xb[4+j]))
			s1 += (int32(q>>4) | h1) * int32(int8(xb[20+j]))
		}
		dd := float32(fp16(wb[:], 0) * fp16(xb[:], 0))
		a := float32(dd * float32(s0+s1))
		m := float32(fp16(wb[:], 2) * fp16(xb[:], 2))
		sumf += float32(a + m)
	}
	return sumf
}

func dotQ8_0(w, x []byte, nb int) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		wb := (*[bytesQ8_0]byte)(w[ib*bytesQ8_0:])
		xb := (*[bytesQ8_0]byte)(x[ib*bytesQ8_0:])
		var s int32
		for j := 2; j < bytesQ8_0; j++ {
			s += int32(int8(wb[j])) * int32(int8(xb[j]))
		}
		dd := float32(fp16(wb[:], 0) * fp16(xb[:], 0))
		sumf += float32(float32(s) * dd)
	}
	return sumf
}
