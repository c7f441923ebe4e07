// Package safetensors reads (and, for tests and tools, writes) Hugging Face
// safetensors checkpoints: a single file, or a sharded model described by
// model.safetensors.index.json. Files are memory-mapped and tensor data is
// handed out as slices of the mapping, never copied. Headers are validated
// so that malformed input gives an error, never a panic.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"sort"

	"github.com/helexa/helexa/pkg/dtype"
)

// MaxHeaderSize bounds the JSON header, as the reference implementation
// does (100 MB).
const MaxHeaderSize = 100_000_000

// ErrFormat is wrapped by every error about a malformed file.
var ErrFormat = errors.New("invalid safetensors file")

// ErrUnsupportedDType is wrapped by errors about tensors whose element
// type helexa cannot compute with.
var ErrUnsupportedDType = errors.New("unsupported safetensors dtype")

// UnsupportedDTypeError names a tensor whose dtype helexa cannot use.
type UnsupportedDTypeError struct {
	Tensor string
	DType  string
}

func (e *UnsupportedDTypeError) Error() string {
	return fmt.Sprintf("tensor %s has dtype %s; helexa reads F32, F16 and BF16 safetensors (convert the checkpoint, or use a GGUF)", e.Tensor, e.DType)
}

// Unwrap lets errors.Is(err, ErrUnsupportedDType) match.
func (e *UnsupportedDTypeError) Unwrap() error { return ErrUnsupportedDType }

// dtypeBits is the element width of every dtype of the safetensors format.
var dtypeBits = map[string]uint64{
	"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32,
	"I64": 64, "U64": 64, "F64": 64, "C64": 64,
	"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

// TensorInfo describes one tensor. Shape is in the file's (PyTorch) order,
// slowest-varying first: a Hugging Face matrix is [out, in].
type TensorInfo struct {
	Name  string
	DType string // the file's dtype name (F32, BF16, I64, ...)
	Shape []uint64
	// Begin and End are byte offsets of the data within its file.
	Begin, End int64
	shard      int
}

// Elements is the number of elements.
func (t *TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Size is the byte size of the data.
func (t *TensorInfo) Size() int64 { return t.End - t.Begin }

// Type maps the dtype to helexa's: F32, F16 and BF16; any other gives an
// *UnsupportedDTypeError naming the tensor.
func (t *TensorInfo) Type() (dtype.Type, error) {
	switch t.DType {
	case "F32":
		return dtype.F32, nil
	case "F16":
		return dtype.F16, nil
	case "BF16":
		return dtype.BF16, nil
	}
	return 0, &UnsupportedDTypeError{Tensor: t.Name, DType: t.DType}
}

// header is a parsed file header.
type header struct {
	meta    map[string]string
	tensors []*TensorInfo // by offset
	dataOff int64         // where the data buffer starts in the file
}

type rawTensor struct {
	DType       string   `json:"dtype"`
	Shape       []uint64 `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// parseHeader validates the header of a file of size len(data): the
// length prefix, the JSON, every tensor's dtype, shape and offsets (inside
// the data buffer, sized exactly for the shape, not overlapping).
func parseHeader(data []byte) (*header, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, too small for the 8-byte header length", ErrFormat, len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("%w: header length %d exceeds the %d-byte limit", ErrFormat, n, MaxHeaderSize)
	}
	if n > uint64(len(data)-8) {
		return nil, fmt.Errorf("%w: header length %d runs past the end of the %d-byte file", ErrFormat, n, len(data))
	}
	js := data[8 : 8+n]
	if len(bytes.TrimSpace(js)) == 0 || bytes.TrimSpace(js)[0] != '{' {
		return nil, fmt.Errorf("%w: the header is not a JSON object", ErrFormat)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, fmt.Errorf("%w: header JSON: %w", ErrFormat, err)
	}
	h := &header{dataOff: int64(8 + n)}
	bufLen := uint64(len(data)) - 8 - n
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.meta); err != nil {
				return nil, fmt.Errorf("%w: __metadata__ must map strings to strings: %w", ErrFormat, err)
			}
			continue
		}
		t, err := parseTensor(name, msg, bufLen, h.dataOff)
		if err != nil {
			return nil, err
		}
		h.tensors = append(h.tensors, t)
	}
	sort.Slice(h.tensors, func(i, j int) bool {
		a, b := h.tensors[i], h.tensors[j]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	for i := 1; i < len(h.tensors); i++ {
		if prev, t := h.tensors[i-1], h.tensors[i]; t.Begin < prev.End {
			return nil, fmt.Errorf("%w: tensors %s and %s overlap", ErrFormat, prev.Name, t.Name)
		}
	}
	return h, nil
}

func parseTensor(name string, msg json.RawMessage, bufLen uint64, dataOff int64) (*TensorInfo, error) {
	var rt rawTensor
	if err := json.Unmarshal(msg, &rt); err != nil {
		return nil, fmt.Errorf("%w: tensor %q: %w", ErrFormat, name, err)
	}
	bitsPer, ok := dtypeBits[rt.DType]
	if !ok {
		return nil, fmt.Errorf("%w: tensor %q has unknown dtype %q", ErrFormat, name, rt.DType)
	}
	if len(rt.DataOffsets) != 2 || rt.DataOffsets[0] > rt.DataOffsets[1] {
		return nil, fmt.Errorf("%w: tensor %q: data_offsets %v must be [begin, end] with begin <= end", ErrFormat, name, rt.DataOffsets)
	}
	begin, end := rt.DataOffsets[0], rt.DataOffsets[1]
	if end > bufLen {
		return nil, fmt.Errorf("%w: tensor %q: data ends at %d, past the %d-byte data buffer", ErrFormat, name, end, bufLen)
	}
	total := bitsPer
	for _, d := range rt.Shape {
		hi, lo := bits.Mul64(total, d)
		if hi != 0 {
			return nil, fmt.Errorf("%w: tensor %q: shape %v is too large", ErrFormat, name, rt.Shape)
		}
		total = lo
	}
	if total%8 != 0 || total/8 != end-begin {
		return nil, fmt.Errorf("%w: tensor %q: %s %v needs %d bits but data_offsets give %d bytes", ErrFormat, name, rt.DType, rt.Shape, total, end-begin)
	}
	if rt.Shape == nil {
		rt.Shape = []uint64{}
	}
	return &TensorInfo{Name: name, DType: rt.DType, Shape: rt.Shape,
		Begin: dataOff + int64(begin), End: dataOff + int64(end)}, nil
}
