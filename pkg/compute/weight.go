package compute

import (
	"fmt"

	"github.com/helexa/helexa/pkg/compute/quant"
	"github.com/helexa/helexa/pkg/dtype"
)

// matMulTypes are the weight types the matmuls and embedding lookups
// support.
var matMulTypes = []dtype.Type{
	dtype.F32, dtype.F16, dtype.BF16,
	dtype.Q4_0, dtype.Q4_1, dtype.Q5_0, dtype.Q5_1, dtype.Q8_0,
	dtype.Q2_K, dtype.Q3_K, dtype.Q4_K, dtype.Q5_K, dtype.Q6_K,
}

// SupportedType reports whether weights of type t can be used in matmuls
// and embedding lookups.
func SupportedType(t dtype.Type) bool {
	for _, s := range matMulTypes {
		if s == t {
			return true
		}
	}
	return false
}

// SupportedTypes lists the weight types SupportedType accepts.
func SupportedTypes() []dtype.Type { return append([]dtype.Type(nil), matMulTypes...) }

// UnsupportedTypeError reports a tensor whose element type cannot be used.
type UnsupportedTypeError struct {
	Tensor string
	Type   dtype.Type
}

func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("tensor %s has type %s, which helexa cannot compute with (supported: %v)",
		e.Tensor, e.Type, matMulTypes)
}

// Weight is a possibly-quantized tensor viewed in place: Data usually
// aliases the model file's memory map and is never copied. Dims are ggml
// ne (fastest-varying first): Dims[0] is the row length (the input width
// of a matrix), Dims[1] the number of rows (its output width), and an
// optional Dims[2] stacks several matrices (MoE experts).
type Weight struct {
	Name string
	Type dtype.Type
	Dims []int
	Data []byte
	// Mapped reports that Data aliases a read-only file mapping: a backend
	// that keeps its own copy of the weight may release Data's pages (a
	// later read faults them back in from the file). The CPU packs only
	// such weights.
	Mapped bool
	// Lookup reports that the model only reads single rows of the weight
	// (an embedding table that is not also the output head): a backend
	// need not prepare it for matmuls.
	Lookup   bool
	rowBytes int
	packed   *quant.Packed // a backend's load-time interleaved copy (nil: none)
}

// NewWeight checks that data holds exactly a tensor of type t and shape
// dims and returns a handle on it.
func NewWeight(name string, t dtype.Type, dims []int, data []byte) (*Weight, error) {
	if !SupportedType(t) {
		return nil, &UnsupportedTypeError{Tensor: name, Type: t}
	}
	if len(dims) == 0 || len(dims) > 3 {
		return nil, fmt.Errorf("tensor %s: %d dimensions, want 1 to 3", name, len(dims))
	}
	n := int64(1)
	for _, d := range dims {
		if d <= 0 {
			return nil, fmt.Errorf("tensor %s: bad dimensions %v", name, dims)
		}
		n *= int64(d)
	}
	rb, err := t.RowBytes(int64(dims[0]))
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	if want := rb * (n / int64(dims[0])); int64(len(data)) != want {
		return nil, fmt.Errorf("tensor %s: %d bytes of data, want %d for %s %v", name, len(data), want, t, dims)
	}
	return &Weight{Name: name, Type: t, Dims: append([]int(nil), dims...), Data: data, rowBytes: int(rb)}, nil
}

// Cols is the row length (the input width of the matrix).
func (w *Weight) Cols() int { return w.Dims[0] }

// Rows is the number of rows of one matrix (the output width).
func (w *Weight) Rows() int {
	if len(w.Dims) < 2 {
		return 1
	}
	return w.Dims[1]
}

// Mats is the number of stacked matrices (1 unless the weight is 3-D).
func (w *Weight) Mats() int {
	if len(w.Dims) < 3 {
		return 1
	}
	return w.Dims[2]
}

// RowBytes is the byte size of one row.
func (w *Weight) RowBytes() int { return w.rowBytes }

// Row returns the bytes of row i of the (first) matrix.
func (w *Weight) Row(i int) []byte { return w.Data[i*w.rowBytes : (i+1)*w.rowBytes] }

// Packed is the interleaved copy of the weight's rows a backend made in
// Prepare (the CPU's, for its VNNI kernels), or nil.
func (w *Weight) Packed() *quant.Packed { return w.packed }

// SetPacked records the interleaved copy a backend made in Prepare; Mat
// hands each stacked matrix its share of it.
func (w *Weight) SetPacked(p *quant.Packed) { w.packed = p }

// Mat returns the e-th stacked matrix as a 2-D weight sharing the bytes.
func (w *Weight) Mat(e int) *Weight {
	size := w.Rows() * w.rowBytes
	m := &Weight{
		Name:     fmt.Sprintf("%s[%d]", w.Name, e),
		Type:     w.Type,
		Dims:     []int{w.Cols(), w.Rows()},
		Data:     w.Data[e*size : (e+1)*size],
		Mapped:   w.Mapped,
		Lookup:   w.Lookup,
		rowBytes: w.rowBytes,
	}
	if w.packed != nil {
		g := w.Rows() / quant.PackRows
		m.packed = w.packed.Slice(e*g, (e+1)*g)
	}
	return m
}
