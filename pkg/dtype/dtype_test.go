package dtype

import (
	"strconv"
	"strings"
	"testing"
)

// TestLayouts checks every type's block layout against ggml's
// (ggml-common.h static_asserts and ggml.c's type_traits).
func TestLayouts(t *testing.T) {
	tests := []struct {
		typ              Type
		id               uint32
		name             string
		block, typeBytes int
	}{
		{F32, 0, "F32", 1, 4}, {F16, 1, "F16", 1, 2}, {BF16, 30, "BF16", 1, 2}, {F64, 28, "F64", 1, 8},
		{I8, 24, "I8", 1, 1}, {I16, 25, "I16", 1, 2}, {I32, 26, "I32", 1, 4}, {I64, 27, "I64", 1, 8},
		{Q4_0, 2, "Q4_0", 32, 18}, {Q4_1, 3, "Q4_1", 32, 20}, {Q5_0, 6, "Q5_0", 32, 22}, {Q5_1, 7, "Q5_1", 32, 24},
		{Q8_0, 8, "Q8_0", 32, 34}, {Q8_1, 9, "Q8_1", 32, 36},
		{Q2_K, 10, "Q2_K", 256, 84}, {Q3_K, 11, "Q3_K", 256, 110}, {Q4_K, 12, "Q4_K", 256, 144},
		{Q5_K, 13, "Q5_K", 256, 176}, {Q6_K, 14, "Q6_K", 256, 210}, {Q8_K, 15, "Q8_K", 256, 292},
		{IQ2_XXS, 16, "IQ2_XXS", 256, 66}, {IQ2_XS, 17, "IQ2_XS", 256, 74}, {IQ3_XXS, 18, "IQ3_XXS", 256, 98},
		{IQ1_S, 19, "IQ1_S", 256, 50}, {IQ4_NL, 20, "IQ4_NL", 32, 18}, {IQ3_S, 21, "IQ3_S", 256, 110},
		{IQ2_S, 22, "IQ2_S", 256, 82}, {IQ4_XS, 23, "IQ4_XS", 256, 136}, {IQ1_M, 29, "IQ1_M", 256, 56},
		{TQ1_0, 34, "TQ1_0", 256, 54}, {TQ2_0, 35, "TQ2_0", 256, 66}, {MXFP4, 39, "MXFP4", 32, 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if uint32(tt.typ) != tt.id || !tt.typ.Known() || tt.typ.String() != tt.name {
				t.Errorf("id %d known %v name %q, want id %d name %q", uint32(tt.typ), tt.typ.Known(), tt.typ, tt.id, tt.name)
			}
			if tt.typ.BlockSize() != tt.block || tt.typ.TypeSize() != tt.typeBytes {
				t.Errorf("block %d × %d bytes, want %d × %d", tt.typ.BlockSize(), tt.typ.TypeSize(), tt.block, tt.typeBytes)
			}
			if got, ok := Parse(strings.ToLower(tt.name)); !ok || got != tt.typ {
				t.Errorf("Parse(%q) = %v, %v", strings.ToLower(tt.name), got, ok)
			}
			if n, err := tt.typ.RowBytes(int64(4 * tt.block)); err != nil || n != int64(4*tt.typeBytes) {
				t.Errorf("RowBytes(4 blocks) = %d, %v", n, err)
			}
		})
	}
	if len(table) != len(tests) {
		t.Errorf("table has %d types, the test %d", len(table), len(tests))
	}
}

func TestUnknownAndBadRows(t *testing.T) {
	for _, id := range []Type{4, 5, 31, 33, 36, 40, 1000} {
		if id.Known() || id.BlockSize() != 0 || id.String() != "type("+strconv.Itoa(int(id))+")" {
			t.Errorf("type %d: known %v, block %d, name %q", uint32(id), id.Known(), id.BlockSize(), id)
		}
		if _, err := id.RowBytes(32); err == nil {
			t.Errorf("type %d: RowBytes accepted an unknown type", uint32(id))
		}
	}
	if _, err := Q4_K.RowBytes(100); err == nil || !strings.Contains(err.Error(), "256-element blocks") {
		t.Errorf("RowBytes(100) of Q4_K: %v", err)
	}
	if _, ok := Parse("Q4_K_M"); ok {
		t.Error("Parse accepted a file-type mix name")
	}
}
