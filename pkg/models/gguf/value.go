// Package gguf owns the GGUF model file format: a reader for versions 2 and 3
// (header, typed metadata, tensor table, alignment, tensor data memory-mapped
// and never copied), split files (name-00001-of-0000N.gguf) presented as one
// File, and a writer for version 3 that tests and tools use to build models.
package gguf

import (
	"errors"
	"fmt"
	"math"
)

// ValueType is the type tag of a GGUF metadata value.
type ValueType uint32

// GGUF metadata value types (values fixed by the format).
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var typeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"}

// String returns the short name of the type ("u32", "string", "array").
func (t ValueType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// valid reports whether t is a type the format defines.
func (t ValueType) valid() bool { return int(t) < len(typeNames) }

// fixedSize is the encoded size of a scalar type, 0 for string and array.
func (t ValueType) fixedSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// Value is one metadata value. V holds the Go value: uint8, int8, uint16,
// int16, uint32, int32, float32, bool, string, uint64, int64, float64, or
// []any for arrays, whose elements are Go values of type Elem; when Elem is
// TypeArray (nested arrays) each element is itself a Value of TypeArray.
type Value struct {
	Type ValueType
	// Elem is the element type when Type is TypeArray.
	Elem ValueType
	V    any
}

// Errors callers can branch on with errors.Is.
var (
	// ErrFormat marks a file that is not valid GGUF (bad magic, truncated,
	// corrupt counts, offsets or sizes).
	ErrFormat = errors.New("invalid GGUF file")
	// ErrVersion marks a GGUF version this reader does not support.
	ErrVersion = errors.New("unsupported GGUF version")
	// ErrUnknownType marks a tensor whose ggml type helexa does not know.
	ErrUnknownType = errors.New("unknown tensor type")
	// ErrMissingKey marks a metadata key that is not in the file.
	ErrMissingKey = errors.New("metadata key missing")
	// ErrWrongType marks a metadata value of an unexpected type.
	ErrWrongType = errors.New("metadata value has the wrong type")
)

// checkGoType reports whether v's Go type matches the tag t (recursively for
// arrays, whose elements must all be of type elem).
func checkGoType(t, elem ValueType, v any) error {
	ok := false
	switch t {
	case TypeUint8:
		_, ok = v.(uint8)
	case TypeInt8:
		_, ok = v.(int8)
	case TypeUint16:
		_, ok = v.(uint16)
	case TypeInt16:
		_, ok = v.(int16)
	case TypeUint32:
		_, ok = v.(uint32)
	case TypeInt32:
		_, ok = v.(int32)
	case TypeFloat32:
		_, ok = v.(float32)
	case TypeBool:
		_, ok = v.(bool)
	case TypeString:
		_, ok = v.(string)
	case TypeUint64:
		_, ok = v.(uint64)
	case TypeInt64:
		_, ok = v.(int64)
	case TypeFloat64:
		_, ok = v.(float64)
	case TypeArray:
		return checkArray(elem, v)
	default:
		return fmt.Errorf("unknown value type %d", uint32(t))
	}
	if !ok {
		return fmt.Errorf("value of Go type %T does not match GGUF type %s", v, t)
	}
	return nil
}

func checkArray(elem ValueType, v any) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("array value must be []any, got %T", v)
	}
	for i, e := range arr {
		if elem == TypeArray {
			inner, ok := e.(Value)
			if !ok || inner.Type != TypeArray {
				return fmt.Errorf("element %d: a nested array element must be a Value of type array, got %T", i, e)
			}
			if err := checkGoType(TypeArray, inner.Elem, inner.V); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			continue
		}
		if err := checkGoType(elem, 0, e); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// asUint converts any integer value to uint64 when it is non-negative.
func asUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// asInt converts any integer value to int64 when it fits.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}

// asFloat converts a float32 or float64 value to float64.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
