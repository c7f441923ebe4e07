package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// f32Bytes encodes float32 values little-endian.
func f32Bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// smallModel builds a valid model with metadata of several types, a 2-D F32
// tensor and a Q8_0 tensor.
func smallModel(t testing.TB) *Writer {
	t.Helper()
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 1)
	w.SetFloat32("llama.rope.freq_base", 10000)
	w.SetStrings("tokenizer.ggml.tokens", []string{"<s>", "a", "b"})
	w.SetInt32s("tokenizer.ggml.token_type", []int32{3, 1, 1})
	if err := w.AddTensor("a.weight", dtype.F32, []uint64{2, 3}, f32Bytes(1, 2, 3, 4, 5, 6)); err != nil {
		t.Fatal(err)
	}
	q := make([]byte, dtype.Q8_0.TypeSize())
	for i := range q {
		q[i] = byte(i)
	}
	if err := w.AddTensor("b.weight", dtype.Q8_0, []uint64{32}, q); err != nil {
		t.Fatal(err)
	}
	return w
}

func encode(t testing.TB, w *Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func mustParse(t testing.TB, data []byte) *File {
	t.Helper()
	f, err := fromBytes("mem.gguf", data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func TestRoundTripEveryValueType(t *testing.T) {
	nested := Value{Type: TypeArray, Elem: TypeArray, V: []any{
		Value{Type: TypeArray, Elem: TypeUint16, V: []any{uint16(1), uint16(2)}},
		Value{Type: TypeArray, Elem: TypeString, V: []any{"x"}},
	}}
	cases := []struct {
		key string
		val Value
	}{
		{"u8", Value{Type: TypeUint8, V: uint8(200)}},
		{"i8", Value{Type: TypeInt8, V: int8(-100)}},
		{"u16", Value{Type: TypeUint16, V: uint16(60000)}},
		{"i16", Value{Type: TypeInt16, V: int16(-30000)}},
		{"u32", Value{Type: TypeUint32, V: uint32(4000000000)}},
		{"i32", Value{Type: TypeInt32, V: int32(-2000000000)}},
		{"f32", Value{Type: TypeFloat32, V: float32(1.5)}},
		{"bool", Value{Type: TypeBool, V: true}},
		{"string", Value{Type: TypeString, V: "héllo"}},
		{"empty", Value{Type: TypeString, V: ""}},
		{"u64", Value{Type: TypeUint64, V: uint64(math.MaxUint64)}},
		{"i64", Value{Type: TypeInt64, V: int64(math.MinInt64)}},
		{"f64", Value{Type: TypeFloat64, V: math.Pi}},
		{"arr.u8", Value{Type: TypeArray, Elem: TypeUint8, V: []any{uint8(1), uint8(2)}}},
		{"arr.i64", Value{Type: TypeArray, Elem: TypeInt64, V: []any{int64(-1)}}},
		{"arr.f64", Value{Type: TypeArray, Elem: TypeFloat64, V: []any{1.25, -2.5}}},
		{"arr.bool", Value{Type: TypeArray, Elem: TypeBool, V: []any{true, false}}},
		{"arr.string", Value{Type: TypeArray, Elem: TypeString, V: []any{"a", "", "ccc"}}},
		{"arr.empty", Value{Type: TypeArray, Elem: TypeFloat32, V: []any{}}},
		{"arr.nested", nested},
	}
	w := NewWriter()
	for _, c := range cases {
		if err := w.SetValue(c.key, c.val); err != nil {
			t.Fatalf("SetValue(%s): %v", c.key, err)
		}
	}
	f := mustParse(t, encode(t, w))
	if f.Version() != 3 {
		t.Errorf("version %d, want 3", f.Version())
	}
	var keys []string
	for _, c := range cases {
		keys = append(keys, c.key)
		got, ok := f.Value(c.key)
		if !ok {
			t.Errorf("%s: missing", c.key)
			continue
		}
		if !reflect.DeepEqual(got, c.val) {
			t.Errorf("%s: got %#v, want %#v", c.key, got, c.val)
		}
	}
	if !reflect.DeepEqual(f.Keys(), keys) {
		t.Errorf("keys %v, want insertion order %v", f.Keys(), keys)
	}
}

func TestSetValueRejectsMismatchedGoType(t *testing.T) {
	w := NewWriter()
	bad := []Value{
		{Type: TypeUint32, V: int32(1)},
		{Type: TypeArray, Elem: TypeString, V: []string{"a"}},
		{Type: TypeArray, Elem: TypeInt32, V: []any{int64(1)}},
		{Type: TypeArray, Elem: TypeArray, V: []any{[]any{}}},
		{Type: ValueType(99), V: 1},
	}
	for _, v := range bad {
		if err := w.SetValue("k", v); err == nil {
			t.Errorf("SetValue(%#v) accepted", v)
		}
	}
}

func TestWriterKeepsFirstPositionOnOverwrite(t *testing.T) {
	w := NewWriter()
	w.SetUint32("a", 1)
	w.SetUint32("b", 2)
	w.SetUint32("a", 3)
	f := mustParse(t, encode(t, w))
	if got := f.Keys(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("keys %v", got)
	}
	if n, _ := f.Uint("a"); n != 3 {
		t.Fatalf("a = %d, want 3", n)
	}
}

func TestRoundTripTensors(t *testing.T) {
	w := smallModel(t)
	f := mustParse(t, encode(t, w))
	ts := f.Tensors()
	if len(ts) != 2 || ts[0].Name != "a.weight" || ts[1].Name != "b.weight" {
		t.Fatalf("tensors %v", ts)
	}
	a, _ := f.Tensor("a.weight")
	if a.Type != dtype.F32 || !reflect.DeepEqual(a.Dims, []uint64{2, 3}) || a.Elements() != 6 || a.Size != 24 {
		t.Errorf("a.weight = %+v", a)
	}
	if got := f.TensorData(a); !bytes.Equal(got, f32Bytes(1, 2, 3, 4, 5, 6)) {
		t.Errorf("a.weight data %v", got)
	}
	b, _ := f.Tensor("b.weight")
	if b.Offset%32 != 0 || b.Size != int64(dtype.Q8_0.TypeSize()) {
		t.Errorf("b.weight = %+v", b)
	}
	if got := f.TensorData(b); len(got) != 34 || got[33] != 33 {
		t.Errorf("b.weight data %v", got)
	}
	if _, ok := f.Tensor("missing"); ok {
		t.Error("Tensor(missing) found")
	}
	if f.TensorData(&TensorInfo{Name: "a.weight"}) != nil {
		t.Error("TensorData of a foreign TensorInfo is not nil")
	}
}

func TestAddTensorErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  dtype.Type
		dims []uint64
		data []byte
	}{
		{"dup", dtype.F32, []uint64{1}, make([]byte, 4)},
		{"short", dtype.F32, []uint64{2}, make([]byte, 4)},
		{"block", dtype.Q8_0, []uint64{31}, make([]byte, 34)},
		{"unknown", dtype.Type(99), []uint64{1}, make([]byte, 4)},
		{"dims", dtype.F32, []uint64{1, 1, 1, 1, 1}, make([]byte, 4)},
		{"overflow", dtype.F32, []uint64{1 << 40, 1 << 40}, nil},
	}
	w := NewWriter()
	if err := w.AddTensor("dup", dtype.F32, []uint64{1}, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := w.AddTensor(c.name, c.typ, c.dims, c.data); err == nil {
			t.Errorf("AddTensor(%s) accepted", c.name)
		}
	}
}

func TestWriterHonoursAlignment(t *testing.T) {
	w := smallModel(t)
	w.SetUint32("general.alignment", 64)
	f := mustParse(t, encode(t, w))
	if f.Alignment() != 64 {
		t.Fatalf("alignment %d", f.Alignment())
	}
	for _, ti := range f.Tensors() {
		if ti.Offset%64 != 0 {
			t.Errorf("%s offset %d not 64-aligned", ti.Name, ti.Offset)
		}
	}
}

func TestWriteFileAndOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	if err := smallModel(t).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := os.Stat(path)
	if f.FileSize() != st.Size() || f.Path() != path || f.Arch() != "llama" {
		t.Errorf("size %d path %s arch %s", f.FileSize(), f.Path(), f.Arch())
	}
	a, _ := f.Tensor("a.weight")
	if !bytes.Equal(f.TensorData(a), f32Bytes(1, 2, 3, 4, 5, 6)) {
		t.Error("tensor data differs after Open")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.TensorData(a) != nil {
		t.Error("TensorData after Close is not nil")
	}
}

func TestWriteFileFailsInMissingDir(t *testing.T) {
	err := smallModel(t).WriteFile(filepath.Join(t.TempDir(), "no", "m.gguf"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestVersion2Accepted(t *testing.T) {
	data := encode(t, smallModel(t))
	binary.LittleEndian.PutUint32(data[4:], 2)
	f := mustParse(t, data)
	if f.Version() != 2 || len(f.Tensors()) != 2 {
		t.Fatalf("version %d, %d tensors", f.Version(), len(f.Tensors()))
	}
}

func TestTensorDataIsNotCopied(t *testing.T) {
	data := encode(t, smallModel(t))
	f := mustParse(t, data)
	a, _ := f.Tensor("a.weight")
	got := f.TensorData(a)
	off := f.shards[0].hdr.dataOffset + int64(a.Offset)
	if &got[0] != &data[off] || cap(got) != len(got) {
		t.Fatal("TensorData is not a capped view of the file image")
	}
}
