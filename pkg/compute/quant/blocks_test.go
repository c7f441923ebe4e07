package quant

import (
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

func fill(b []byte, v byte) []byte {
	for i := range b {
		b[i] = v
	}
	return b
}

func le16b(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// blockCase is one hand-built block with hand-computed expected values at
// selected element indices.
type blockCase struct {
	name  string
	typ   dtype.Type
	block []byte
	want  map[int]float32
}

func handBlocks() []blockCase {
	// Q4_0: d = 0.5, qs[j] = j | (15-j)<<4 → y[j] = (j-8)/2, y[16+j] = (7-j)/2.
	q40 := make([]byte, 16)
	for j := range q40 {
		q40[j] = byte(j) | byte(15-j)<<4
	}
	// Q5_0: d = 1, qs = 0x21 (lo 1, hi 2); qh bit 0 and bit 17 set.
	// y[0] = (1|16)-16 = 1, y[1] = 1-16 = -15, y[16] = 2-16 = -14, y[17] = (2|16)-16 = 2.
	q50qh := []byte{0x01, 0x00, 0x02, 0x00}
	// Q5_1: d = 0.5, m = 2, same qs/qh: y[0] = 17*0.5+2 = 10.5, y[1] = 0.5+2 = 2.5, y[17] = 18*0.5+2 = 11.
	q80 := make([]byte, 32)
	for j := range q80 {
		q80[j] = byte(int8(j - 16))
	}
	// Q2_K: scales[0] = 0x12 (sc 2, m 1), scales[1] = 0x03 (sc 3, m 0), others 0x11;
	// qs = 0xE4 (levels 0,1,2,3 at shifts 0,2,4,6); d = 0.5, dmin = 0.25.
	q2sc := fill(make([]byte, 16), 0x11)
	q2sc[0], q2sc[1] = 0x12, 0x03
	// Q3_K: d = 0.25; 6-bit scales 33 (j<8) and 34 (j>=8) → signed 1 and 2;
	// qs = 0xE4; hmask all set except bit 0 of hmask[0].
	q3hm := fill(make([]byte, 32), 0xFF)
	q3hm[0] = 0xFE
	q3sc := cat(fill(make([]byte, 8), 0x21), fill(make([]byte, 4), 0xAA))
	// Q4_K/Q5_K: d = 1, dmin = 0.5, (scale, min) per sub-block:
	// (1,0) (2,1) (3,2) (4,3) (17,33) (0,0) (0,0) (0,0); qs = 0x5A (lo 10, hi 5).
	k4sc := []byte{0x41, 2, 3, 4, 0x80, 1, 2, 3, 0x11, 0, 0, 0}
	// Q5_K qh = 0x05: +16 on sub-blocks 0 and 2.
	// Q6_K: d = 0.5; scales[0]=2, [2]=-3, [4]=1, [6]=4, others 1; ql = 0x21, qh = 0xE4.
	q6sc := fill(make([]byte, 16), 1)
	q6sc[0], q6sc[2], q6sc[4], q6sc[6] = 2, byte(0xFD), 1, 4
	q8k := make([]byte, 256)
	for j := range q8k {
		q8k[j] = byte(int8(j - 128))
	}
	return []blockCase{
		{"Q4_0", dtype.Q4_0, cat(le16b(0x3800), q40),
			map[int]float32{0: -4, 8: 0, 15: 3.5, 16: 3.5, 31: -4}},
		{"Q4_1", dtype.Q4_1, cat(le16b(0x3400), le16b(0xBC00), q40),
			map[int]float32{0: -1, 15: 2.75, 16: 2.75, 31: -1}},
		{"Q5_0", dtype.Q5_0, cat(le16b(0x3C00), q50qh, fill(make([]byte, 16), 0x21)),
			map[int]float32{0: 1, 1: -15, 16: -14, 17: 2, 31: -14}},
		{"Q5_1", dtype.Q5_1, cat(le16b(0x3800), le16b(0x4000), q50qh, fill(make([]byte, 16), 0x21)),
			map[int]float32{0: 10.5, 1: 2.5, 16: 3, 17: 11}},
		{"Q8_0", dtype.Q8_0, cat(le16b(0x3000), q80),
			map[int]float32{0: -2, 16: 0, 31: 1.875}},
		{"Q8_1", dtype.Q8_1, cat(le16b(0x4000), le16b(0x1234), q80),
			map[int]float32{0: -32, 17: 2, 31: 30}},
		{"Q2_K", dtype.Q2_K, cat(q2sc, fill(make([]byte, 64), 0xE4), le16b(0x3800), le16b(0x3400)),
			map[int]float32{0: -0.25, 16: 0, 32: 0.25, 96: 1.25, 128: -0.25, 255: 1.25}},
		{"Q3_K", dtype.Q3_K, cat(q3hm, fill(make([]byte, 64), 0xE4), q3sc, le16b(0x3400)),
			map[int]float32{0: -1, 1: 0, 32: 0.25, 127: 0.75, 160: 0.5, 224: 1.5}},
		{"Q4_K", dtype.Q4_K, cat(le16b(0x3C00), le16b(0x3800), k4sc, fill(make([]byte, 128), 0x5A)),
			map[int]float32{0: 10, 32: 9.5, 64: 29, 96: 18.5, 128: 153.5, 160: 0, 255: 0}},
		{"Q5_K", dtype.Q5_K, cat(le16b(0x3C00), le16b(0x3800), k4sc, fill(make([]byte, 32), 0x05), fill(make([]byte, 128), 0x5A)),
			map[int]float32{0: 26, 32: 9.5, 64: 77, 96: 18.5, 128: 153.5}},
		{"Q6_K", dtype.Q6_K, cat(fill(make([]byte, 128), 0x21), fill(make([]byte, 64), 0xE4), q6sc, le16b(0x3800)),
			map[int]float32{0: -31, 32: 22.5, 64: 1, 96: 36, 128: -15.5, 255: 9}},
		{"Q8_K", dtype.Q8_K, cat([]byte{0, 0, 0, 0x3F}, q8k, make([]byte, 32)),
			map[int]float32{0: -64, 128: 0, 255: 63.5}},
		{"F16", dtype.F16, cat(le16b(0x3C00), le16b(0xC000), le16b(0x0001), le16b(0x7BFF)),
			map[int]float32{0: 1, 1: -2, 2: 0x1p-24, 3: 65504}},
		{"BF16", dtype.BF16, cat(le16b(0x3F80), le16b(0xC040)),
			map[int]float32{0: 1, 1: -3}},
		{"F32", dtype.F32, []byte{0, 0, 0xC0, 0x3F, 0, 0, 0x80, 0xBF},
			map[int]float32{0: 1.5, 1: -1}},
	}
}

func TestDequantizeHandBuiltBlocks(t *testing.T) {
	for _, tc := range handBlocks() {
		t.Run(tc.name, func(t *testing.T) {
			if tc.typ.BlockSize() > 1 && len(tc.block) != tc.typ.TypeSize() {
				t.Fatalf("block is %d bytes, %s blocks are %d", len(tc.block), tc.typ, tc.typ.TypeSize())
			}
			n := tc.typ.BlockSize()
			if n == 1 {
				n = len(tc.block) / tc.typ.TypeSize()
			}
			out := make([]float32, n)
			if err := Dequantize(tc.typ, tc.block, out); err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				if out[i] != want {
					t.Errorf("element %d = %g, want %g", i, out[i], want)
				}
			}
		})
	}
}
