package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
)

// Writer builds a safetensors file in memory (tests and tools). Tensors
// are laid out in the order they were added.
type Writer struct {
	meta    map[string]string
	entries []wEntry
	names   map[string]bool
}

type wEntry struct {
	name  string
	dtype string
	shape []uint64
	data  []byte
}

// NewWriter returns an empty writer.
func NewWriter() *Writer { return &Writer{names: map[string]bool{}} }

// SetMetadata sets a __metadata__ entry.
func (w *Writer) SetMetadata(key, value string) {
	if w.meta == nil {
		w.meta = map[string]string{}
	}
	w.meta[key] = value
}

// AddTensor adds a tensor of the given safetensors dtype and shape
// (slowest-varying first); data must be exactly its size.
func (w *Writer) AddTensor(name, dtype string, shape []uint64, data []byte) error {
	if name == "" || name == "__metadata__" || w.names[name] {
		return fmt.Errorf("safetensors writer: bad or duplicate tensor name %q", name)
	}
	b, ok := dtypeBits[dtype]
	if !ok {
		return fmt.Errorf("safetensors writer: tensor %s: unknown dtype %q", name, dtype)
	}
	for _, d := range shape {
		hi, lo := bits.Mul64(b, d)
		if hi != 0 {
			return fmt.Errorf("safetensors writer: tensor %s: shape %v too large", name, shape)
		}
		b = lo
	}
	if b%8 != 0 || b/8 != uint64(len(data)) {
		return fmt.Errorf("safetensors writer: tensor %s: %d bytes, want %d bits for %s %v", name, len(data), b, dtype, shape)
	}
	w.names[name] = true
	w.entries = append(w.entries, wEntry{name: name, dtype: dtype, shape: append([]uint64{}, shape...), data: data})
	return nil
}

// AddF32 adds an F32 tensor.
func (w *Writer) AddF32(name string, shape []uint64, v []float32) error {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return w.AddTensor(name, "F32", shape, data)
}

// WriteTo writes the file: the header length, the JSON header (padded
// with spaces to a multiple of 8 bytes), the data.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	hdr := map[string]any{}
	if len(w.meta) > 0 {
		hdr["__metadata__"] = w.meta
	}
	var off uint64
	for _, e := range w.entries {
		n := uint64(len(e.data))
		hdr[e.name] = rawTensor{DType: e.dtype, Shape: e.shape, DataOffsets: []uint64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return 0, fmt.Errorf("safetensors writer: %w", err)
	}
	if pad := (8 - len(js)%8) % 8; pad > 0 {
		js = append(js, bytes.Repeat([]byte{' '}, pad)...)
	}
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, uint64(len(js)))
	buf.Write(js)
	n, err := buf.WriteTo(out)
	if err != nil {
		return n, err
	}
	for _, e := range w.entries {
		m, err := out.Write(e.data)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// WriteFile writes the file through a temporary file and an atomic
// rename.
func (w *Writer) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".safetensors-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := w.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteIndex writes a model.safetensors.index.json into dir mapping each
// tensor name to its shard's file name.
func WriteIndex(dir string, weightMap map[string]string, totalSize int64) error {
	raw, err := json.MarshalIndent(map[string]any{
		"metadata":   map[string]any{"total_size": totalSize},
		"weight_map": weightMap,
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, IndexName), raw, 0o644)
}
