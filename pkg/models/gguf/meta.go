package gguf

import (
	"fmt"
	"math"
)

// Keys returns every metadata key in file order.
func (f *File) Keys() []string {
	out := make([]string, len(f.kvs))
	for i, e := range f.kvs {
		out[i] = e.key
	}
	return out
}

// Has reports whether the metadata has key.
func (f *File) Has(key string) bool {
	_, ok := f.index[key]
	return ok
}

// Value returns the raw value of key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.index[key]
	if !ok {
		return Value{}, false
	}
	return f.kvs[i].val, true
}

func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Value(key)
	if !ok {
		return Value{}, fmt.Errorf("%w: %q", ErrMissingKey, key)
	}
	return v, nil
}

func wrongType(key string, v Value, want string) error {
	got := v.Type.String()
	if v.Type == TypeArray {
		got = "array of " + v.Elem.String()
	}
	return fmt.Errorf("%w: %q is %s, want %s", ErrWrongType, key, got, want)
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	s, ok := v.V.(string)
	if !ok {
		return "", wrongType(key, v, "string")
	}
	return s, nil
}

// Uint returns a value of any integer type that is non-negative.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	n, ok := asUint(v.V)
	if !ok {
		if _, isInt := asInt(v.V); isInt {
			return 0, fmt.Errorf("%w: %q is %v (%s), want an unsigned integer", ErrWrongType, key, v.V, v.Type)
		}
		return 0, wrongType(key, v, "unsigned integer")
	}
	return n, nil
}

// Int returns a value of any integer type that fits in int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	n, ok := asInt(v.V)
	if !ok {
		return 0, wrongType(key, v, "integer fitting int64")
	}
	return n, nil
}

// Float returns an f32 or f64 value.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	x, ok := asFloat(v.V)
	if !ok {
		return 0, wrongType(key, v, "f32 or f64")
	}
	return x, nil
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	b, ok := v.V.(bool)
	if !ok {
		return false, wrongType(key, v, "bool")
	}
	return b, nil
}

func (f *File) array(key string) (Value, []any, error) {
	v, err := f.lookup(key)
	if err != nil {
		return v, nil, err
	}
	arr, ok := v.V.([]any)
	if !ok {
		return v, nil, wrongType(key, v, "array")
	}
	return v, arr, nil
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	v, arr, err := f.array(key)
	if err != nil {
		return nil, err
	}
	if v.Elem != TypeString {
		return nil, wrongType(key, v, "array of string")
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		out[i], _ = e.(string)
	}
	return out, nil
}

// Int32s returns an array of any integer type whose values fit in int32.
func (f *File) Int32s(key string) ([]int32, error) {
	v, arr, err := f.array(key)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(arr))
	for i, e := range arr {
		n, ok := asInt(e)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			if ok {
				return nil, fmt.Errorf("%w: %q element %d is %d, outside int32", ErrWrongType, key, i, n)
			}
			return nil, wrongType(key, v, "array of integers")
		}
		out[i] = int32(n)
	}
	return out, nil
}

// Bools returns an array of bools, or of integers read as flags (nonzero
// is true).
func (f *File) Bools(key string) ([]bool, error) {
	v, arr, err := f.array(key)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(arr))
	for i, e := range arr {
		if b, ok := e.(bool); ok {
			out[i] = b
			continue
		}
		n, ok := asInt(e)
		if !ok {
			return nil, wrongType(key, v, "array of bools")
		}
		out[i] = n != 0
	}
	return out, nil
}

// Float32s returns an array of f32 (or f64, converted).
func (f *File) Float32s(key string) ([]float32, error) {
	v, arr, err := f.array(key)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(arr))
	for i, e := range arr {
		x, ok := asFloat(e)
		if !ok {
			return nil, wrongType(key, v, "array of f32")
		}
		out[i] = float32(x)
	}
	return out, nil
}

// StringOr returns the string value of key, or def when it is missing or not
// a string.
func (f *File) StringOr(key, def string) string {
	if s, err := f.String(key); err == nil {
		return s
	}
	return def
}

// UintOr returns the unsigned value of key, or def when missing or invalid.
func (f *File) UintOr(key string, def uint64) uint64 {
	if n, err := f.Uint(key); err == nil {
		return n
	}
	return def
}

// FloatOr returns the float value of key, or def when missing or invalid.
func (f *File) FloatOr(key string, def float64) float64 {
	if x, err := f.Float(key); err == nil {
		return x
	}
	return def
}

// BoolOr returns the bool value of key, or def when missing or invalid.
func (f *File) BoolOr(key string, def bool) bool {
	if b, err := f.Bool(key); err == nil {
		return b
	}
	return def
}
