// Package dtype owns the table of tensor element types that GGUF files use
// (ggml type ids): their names, block sizes and byte sizes. It has no
// dependencies so that file readers and compute kernels can share it.
package dtype

import "fmt"

// Type is a ggml tensor type id as stored in GGUF tensor infos.
type Type uint32

// The ggml type ids (values are fixed by the GGUF format).
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	I8   Type = 24
	I16  Type = 25
	I32  Type = 26
	I64  Type = 27
	F64  Type = 28
	BF16 Type = 30
)

// ggml types whose layout helexa knows (so a GGUF holding them opens and
// can be inspected) but which no kernel computes with.
const (
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	IQ1_M   Type = 29
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the super-block size of the K-quants.
const QK_K = 256

type info struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

var table = map[Type]info{
	F32:  {"F32", 1, 4},
	F16:  {"F16", 1, 2},
	BF16: {"BF16", 1, 2},
	F64:  {"F64", 1, 8},
	I8:   {"I8", 1, 1},
	I16:  {"I16", 1, 2},
	I32:  {"I32", 1, 4},
	I64:  {"I64", 1, 8},
	Q4_0: {"Q4_0", 32, 2 + 16},
	Q4_1: {"Q4_1", 32, 2 + 2 + 16},
	Q5_0: {"Q5_0", 32, 2 + 4 + 16},
	Q5_1: {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0: {"Q8_0", 32, 2 + 32},
	Q8_1: {"Q8_1", 32, 2 + 2 + 32},
	Q2_K: {"Q2_K", QK_K, QK_K/16 + QK_K/4 + 2 + 2},
	Q3_K: {"Q3_K", QK_K, QK_K/8 + QK_K/4 + 12 + 2},
	Q4_K: {"Q4_K", QK_K, 2 + 2 + 12 + QK_K/2},
	Q5_K: {"Q5_K", QK_K, 2 + 2 + 12 + QK_K/8 + QK_K/2},
	Q6_K: {"Q6_K", QK_K, QK_K/2 + QK_K/4 + QK_K/16 + 2},
	Q8_K: {"Q8_K", QK_K, 4 + QK_K + QK_K/16*2},
	// layouts from ggml-common.h (block_iq*, block_tq*, block_mxfp4)
	IQ2_XXS: {"IQ2_XXS", QK_K, 2 + QK_K/8*2},
	IQ2_XS:  {"IQ2_XS", QK_K, 2 + QK_K/8*2 + QK_K/32},
	IQ3_XXS: {"IQ3_XXS", QK_K, 2 + 3*(QK_K/8)},
	IQ1_S:   {"IQ1_S", QK_K, 2 + QK_K/8 + QK_K/16},
	IQ4_NL:  {"IQ4_NL", 32, 2 + 16},
	IQ3_S:   {"IQ3_S", QK_K, 2 + 13*(QK_K/32) + QK_K/64},
	IQ2_S:   {"IQ2_S", QK_K, 2 + QK_K/4 + QK_K/16},
	IQ4_XS:  {"IQ4_XS", QK_K, 2 + 2 + QK_K/64 + QK_K/2},
	IQ1_M:   {"IQ1_M", QK_K, QK_K/8 + QK_K/16 + QK_K/32},
	TQ1_0:   {"TQ1_0", QK_K, 2 + QK_K/64 + (QK_K-4*QK_K/64)/5},
	TQ2_0:   {"TQ2_0", QK_K, 2 + QK_K/4},
	MXFP4:   {"MXFP4", 32, 1 + 16},
}

// Known reports whether t is a type helexa knows the layout of (not
// necessarily one it can compute with: see compute.SupportedType).
func (t Type) Known() bool { _, ok := table[t]; return ok }

// String returns the ggml name of the type ("Q4_K"), or "type(N)" if unknown.
func (t Type) String() string {
	if i, ok := table[t]; ok {
		return i.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (1 for plain types).
// It is 0 for unknown types.
func (t Type) BlockSize() int { return table[t].blockSize }

// TypeSize is the number of bytes of one block. It is 0 for unknown types.
func (t Type) TypeSize() int { return table[t].typeSize }

// RowBytes returns the byte size of n elements of type t, or an error when n
// is not a whole number of blocks or the type is unknown.
func (t Type) RowBytes(n int64) (int64, error) {
	i, ok := table[t]
	if !ok {
		return 0, fmt.Errorf("unknown tensor type %d", uint32(t))
	}
	if n%int64(i.blockSize) != 0 {
		return 0, fmt.Errorf("%d elements of %s is not a whole number of %d-element blocks", n, i.name, i.blockSize)
	}
	return n / int64(i.blockSize) * int64(i.typeSize), nil
}

// Parse returns the type with the given ggml name (case-insensitive).
func Parse(name string) (Type, bool) {
	for t, i := range table {
		if equalFold(i.name, name) {
			return t, true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'a' <= ca && ca <= 'z' {
			ca -= 'a' - 'A'
		}
		if 'a' <= cb && cb <= 'z' {
			cb -= 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}
