package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

func image(t testing.TB, w *Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func smallWriter(t testing.TB) *Writer {
	t.Helper()
	w := NewWriter()
	w.SetMetadata("format", "pt")
	must(t, w.AddF32("a.weight", []uint64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	must(t, w.AddTensor("b.bias", "BF16", []uint64{2}, []byte{0x80, 0x3f, 0x00, 0x40}))
	must(t, w.AddTensor("c.half", "F16", []uint64{1}, []byte{0x00, 0x3c}))
	must(t, w.AddTensor("ids", "I64", []uint64{1}, make([]byte, 8)))
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	f, err := FromBytes("x", image(t, smallWriter(t)))
	must(t, err)
	if got := f.Metadata()["format"]; got != "pt" {
		t.Errorf("metadata format %q", got)
	}
	if n := len(f.Tensors()); n != 4 {
		t.Fatalf("%d tensors, want 4", n)
	}
	tests := []struct {
		name  string
		typ   dtype.Type
		shape []uint64
		data  []byte
	}{
		{"a.weight", dtype.F32, []uint64{2, 3}, []byte{0, 0, 0x80, 0x3f}},
		{"b.bias", dtype.BF16, []uint64{2}, []byte{0x80, 0x3f, 0x00, 0x40}},
		{"c.half", dtype.F16, []uint64{1}, []byte{0x00, 0x3c}},
	}
	for _, tc := range tests {
		ti, ok := f.Tensor(tc.name)
		if !ok {
			t.Fatalf("%s missing", tc.name)
		}
		typ, err := ti.Type()
		if err != nil || typ != tc.typ {
			t.Errorf("%s: type %v %v, want %v", tc.name, typ, err, tc.typ)
		}
		if !equalU64(ti.Shape, tc.shape) {
			t.Errorf("%s: shape %v, want %v", tc.name, ti.Shape, tc.shape)
		}
		if d := f.TensorData(ti); !bytes.HasPrefix(d, tc.data) || int64(len(d)) != ti.Size() {
			t.Errorf("%s: data % x", tc.name, d)
		}
	}
	ids, _ := f.Tensor("ids")
	_, err = ids.Type()
	var ue *UnsupportedDTypeError
	if !errors.As(err, &ue) || ue.Tensor != "ids" || ue.DType != "I64" || !strings.Contains(err.Error(), "I64") {
		t.Errorf("I64 tensor: %v", err)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// withHeader builds a file from a literal JSON header and n data bytes.
func withHeader(js string, n int) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	out = append(out, js...)
	return append(out, make([]byte, n)...)
}

func TestHeaderErrors(t *testing.T) {
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "too small"},
		{"absurd length", append(huge, "{}"...), "exceeds"},
		{"length past end", withHeader("{}", 0)[:9], "past the end"},
		{"not an object", withHeader(`[1]`, 0), "not a JSON object"},
		{"bad json", withHeader(`{"a":`, 0), "header JSON"},
		{"bad metadata", withHeader(`{"__metadata__": {"a": 1}}`, 0), "__metadata__"},
		{"unknown dtype", withHeader(`{"t": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}}`, 1), `unknown dtype "Q4"`},
		{"negative shape", withHeader(`{"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}`, 4), `tensor "t"`},
		{"one offset", withHeader(`{"t": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}`, 4), "data_offsets"},
		{"reversed offsets", withHeader(`{"t": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}}`, 4), "begin <= end"},
		{"past the end", withHeader(`{"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}`, 4), "past the 4-byte data buffer"},
		{"short data", withHeader(`{"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}`, 8), "needs 64 bits"},
		{"shape overflow", withHeader(`{"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}}`, 4), "too large"},
		{"overlap", withHeader(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, 8), "overlap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromBytes("x", tc.data)
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrFormat containing %q", err, tc.want)
			}
		})
	}
}

func TestOpenSingleAndDir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	must(t, smallWriter(t).WriteFile(path))
	for _, p := range []string{path, dir} {
		f, err := Open(p)
		must(t, err)
		if len(f.Tensors()) != 4 || f.FileSize() <= 0 {
			t.Errorf("%s: %d tensors, size %d", p, len(f.Tensors()), f.FileSize())
		}
		ti, _ := f.Tensor("c.half")
		if d := f.TensorData(ti); !bytes.Equal(d, []byte{0x00, 0x3c}) {
			t.Errorf("%s: c.half data % x", p, d)
		}
		must(t, f.Close())
		must(t, f.Close()) // a second Close is harmless
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.safetensors") {
		t.Errorf("empty dir: %v", err)
	}
	bad := filepath.Join(dir, "bad.safetensors")
	must(t, os.WriteFile(bad, []byte("short"), 0o644))
	if _, err := Open(bad); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), bad) {
		t.Errorf("short file: %v", err)
	}
}

// writeSharded writes two shards and an index into a new directory.
func writeSharded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w1, w2 := NewWriter(), NewWriter()
	must(t, w1.AddF32("x", []uint64{2}, []float32{1, 2}))
	must(t, w2.AddF32("y", []uint64{1}, []float32{3}))
	must(t, w1.WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors")))
	must(t, w2.WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors")))
	must(t, WriteIndex(dir, map[string]string{"x": "model-00001-of-00002.safetensors", "y": "model-00002-of-00002.safetensors"}, 12))
	return dir
}

func TestSharded(t *testing.T) {
	dir := writeSharded(t)
	for _, p := range []string{dir, filepath.Join(dir, IndexName)} {
		f, err := Open(p)
		must(t, err)
		for name, want := range map[string][]byte{"x": {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, "y": {0, 0, 0x40, 0x40}} {
			ti, ok := f.Tensor(name)
			if !ok || !bytes.Equal(f.TensorData(ti), want) {
				t.Errorf("%s: tensor %s wrong or missing", p, name)
			}
		}
		must(t, f.Close())
	}
}

func TestIndexErrors(t *testing.T) {
	tests := []struct {
		name  string
		index string
		want  string
	}{
		{"bad json", `{`, "invalid safetensors"},
		{"empty map", `{"weight_map": {}}`, "empty weight_map"},
		{"traversal", `{"weight_map": {"x": "../model-00001-of-00002.safetensors"}}`, "not a file name"},
		{"missing tensor", `{"weight_map": {"x": "model-00001-of-00002.safetensors", "z": "model-00002-of-00002.safetensors"}}`, `tensor "z"`},
		{"wrong shard", `{"weight_map": {"x": "model-00002-of-00002.safetensors", "y": "model-00002-of-00002.safetensors"}}`, `tensor "x"`},
		{"missing shard", `{"weight_map": {"x": "gone.safetensors"}}`, "gone.safetensors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSharded(t)
			must(t, os.WriteFile(filepath.Join(dir, IndexName), []byte(tc.index), 0o644))
			_, err := Open(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDuplicateAcrossShards(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.safetensors", "b.safetensors"} {
		w := NewWriter()
		must(t, w.AddF32("x", []uint64{1}, []float32{1}))
		must(t, w.WriteFile(filepath.Join(dir, n)))
	}
	if _, err := Open(dir); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "in both") {
		t.Errorf("duplicate: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	must(t, w.AddF32("x", []uint64{1}, []float32{1}))
	for name, err := range map[string]error{
		"duplicate":  w.AddF32("x", []uint64{1}, []float32{1}),
		"size":       w.AddTensor("y", "F32", []uint64{2}, make([]byte, 4)),
		"dtype":      w.AddTensor("z", "Q8_0", []uint64{1}, make([]byte, 4)),
		"reserved":   w.AddF32("__metadata__", []uint64{1}, []float32{1}),
		"empty name": w.AddF32("", []uint64{1}, []float32{1}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
