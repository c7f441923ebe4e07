package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/helexa/helexa/pkg/dtype"
)

// Writer builds a GGUF v3 file in memory: metadata in insertion order (a key
// set twice keeps its first position and takes the new value), tensors in the
// order added, data aligned to general.alignment (default 32).
type Writer struct {
	kvs     []kv
	index   map[string]int
	tensors []wtensor
	names   map[string]bool
}

type wtensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty writer.
func NewWriter() *Writer {
	return &Writer{index: map[string]int{}, names: map[string]bool{}}
}

func (w *Writer) set(key string, v Value) {
	if i, ok := w.index[key]; ok {
		w.kvs[i].val = v
		return
	}
	w.index[key] = len(w.kvs)
	w.kvs = append(w.kvs, kv{key: key, val: v})
}

// SetValue sets a metadata value of any type; V must be the Go type that
// matches Type (see Value).
func (w *Writer) SetValue(key string, v Value) error {
	if err := checkGoType(v.Type, v.Elem, v.V); err != nil {
		return fmt.Errorf("metadata key %q: %w", key, err)
	}
	w.set(key, v)
	return nil
}

// SetString sets a string value.
func (w *Writer) SetString(key, v string) { w.set(key, Value{Type: TypeString, V: v}) }

// SetUint32 sets a u32 value.
func (w *Writer) SetUint32(key string, v uint32) { w.set(key, Value{Type: TypeUint32, V: v}) }

// SetInt32 sets an i32 value.
func (w *Writer) SetInt32(key string, v int32) { w.set(key, Value{Type: TypeInt32, V: v}) }

// SetUint64 sets a u64 value.
func (w *Writer) SetUint64(key string, v uint64) { w.set(key, Value{Type: TypeUint64, V: v}) }

// SetFloat32 sets an f32 value.
func (w *Writer) SetFloat32(key string, v float32) { w.set(key, Value{Type: TypeFloat32, V: v}) }

// SetBool sets a bool value.
func (w *Writer) SetBool(key string, v bool) { w.set(key, Value{Type: TypeBool, V: v}) }

// SetStrings sets an array of strings.
func (w *Writer) SetStrings(key string, v []string) {
	w.set(key, Value{Type: TypeArray, Elem: TypeString, V: toAny(v)})
}

// SetInt32s sets an array of i32.
func (w *Writer) SetInt32s(key string, v []int32) {
	w.set(key, Value{Type: TypeArray, Elem: TypeInt32, V: toAny(v)})
}

// SetFloat32s sets an array of f32.
func (w *Writer) SetFloat32s(key string, v []float32) {
	w.set(key, Value{Type: TypeArray, Elem: TypeFloat32, V: toAny(v)})
}

func toAny[T any](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// AddTensor adds a tensor; data must be exactly the tensor's byte size. The
// data slice is kept (not copied) until the file is written.
func (w *Writer) AddTensor(name string, typ dtype.Type, dims []uint64, data []byte) error {
	if w.names[name] {
		return fmt.Errorf("add tensor %q: duplicate tensor name", name)
	}
	t := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ}
	if len(dims) > maxDims {
		return fmt.Errorf("add tensor %q: %d dimensions (at most %d)", name, len(dims), maxDims)
	}
	if err := t.validate(1); err != nil {
		return fmt.Errorf("add tensor: %w", err)
	}
	if int64(len(data)) != t.Size {
		return fmt.Errorf("add tensor %q: %d bytes of data, want %d for %s %v", name, len(data), t.Size, typ, dims)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, wtensor{info: t, data: data})
	return nil
}

func (w *Writer) alignment() uint64 {
	if i, ok := w.index["general.alignment"]; ok {
		if a, ok := asUint(w.kvs[i].val.V); ok && a > 0 && a&(a-1) == 0 {
			return a
		}
	}
	return defaultAlignment
}

// WriteTo writes the GGUF file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	bw := &binWriter{w: bufio.NewWriterSize(out, 1<<20)}
	align := w.alignment()
	bw.raw([]byte(magic))
	bw.u32(3)
	bw.u64(uint64(len(w.tensors)))
	bw.u64(uint64(len(w.kvs)))
	for _, e := range w.kvs {
		bw.str(e.key)
		bw.u32(uint32(e.val.Type))
		bw.value(e.val)
	}
	var off uint64
	for _, t := range w.tensors {
		bw.str(t.info.Name)
		bw.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			bw.u64(d)
		}
		bw.u32(uint32(t.info.Type))
		bw.u64(off)
		off = uint64(alignUp(int64(off)+t.info.Size, int64(align)))
	}
	bw.pad(align)
	for _, t := range w.tensors {
		bw.raw(t.data)
		bw.pad(align)
	}
	if bw.err == nil {
		bw.err = bw.w.Flush()
	}
	return bw.n, bw.err
}

// WriteFile writes the file to path through a temporary file in the same
// directory and an atomic rename.
func (w *Writer) WriteFile(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = w.WriteTo(tmp); err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	return nil
}

// binWriter writes little-endian values, remembering the first error.
type binWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	b   [8]byte
}

func (b *binWriter) raw(p []byte) {
	if b.err != nil {
		return
	}
	n, err := b.w.Write(p)
	b.n += int64(n)
	b.err = err
}

func (b *binWriter) u8(v uint8)   { b.raw([]byte{v}) }
func (b *binWriter) u16(v uint16) { binary.LittleEndian.PutUint16(b.b[:], v); b.raw(b.b[:2]) }
func (b *binWriter) u32(v uint32) { binary.LittleEndian.PutUint32(b.b[:], v); b.raw(b.b[:4]) }
func (b *binWriter) u64(v uint64) { binary.LittleEndian.PutUint64(b.b[:], v); b.raw(b.b[:8]) }
func (b *binWriter) str(s string) { b.u64(uint64(len(s))); b.raw([]byte(s)) }

func (b *binWriter) pad(align uint64) {
	if r := uint64(b.n) % align; r != 0 {
		b.raw(make([]byte, align-r))
	}
}

// value writes v's payload (its type tag is written by the caller).
func (b *binWriter) value(v Value) {
	switch x := v.V.(type) {
	case uint8:
		b.u8(x)
	case int8:
		b.u8(uint8(x))
	case bool:
		if x {
			b.u8(1)
		} else {
			b.u8(0)
		}
	case uint16:
		b.u16(x)
	case int16:
		b.u16(uint16(x))
	case uint32:
		b.u32(x)
	case int32:
		b.u32(uint32(x))
	case float32:
		b.u32(math.Float32bits(x))
	case uint64:
		b.u64(x)
	case int64:
		b.u64(uint64(x))
	case float64:
		b.u64(math.Float64bits(x))
	case string:
		b.str(x)
	case []any:
		b.u32(uint32(v.Elem))
		b.u64(uint64(len(x)))
		for _, e := range x {
			if inner, ok := e.(Value); ok {
				b.value(inner)
				continue
			}
			b.value(Value{Type: v.Elem, V: e})
		}
	}
}
