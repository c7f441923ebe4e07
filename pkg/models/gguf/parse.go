package gguf

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/helexa/helexa/pkg/dtype"
)

// Format constants.
const (
	magic            = "GGUF"
	defaultAlignment = 32
	maxDims          = 4 // GGML_MAX_DIMS
	// maxNesting bounds nested arrays so a hostile file cannot recurse deep.
	maxNesting = 8
)

// kv is one metadata entry.
type kv struct {
	key string
	val Value
}

// header is everything parsed from one GGUF file (or shard).
type header struct {
	version    uint32
	kvs        []kv
	index      map[string]int
	tensors    []*TensorInfo
	alignment  uint64
	dataOffset int64 // start of the tensor data section
	size       int64 // file size
}

// cursor reads sequentially from an io.ReaderAt of known size, buffering, and
// refuses to read past the end.
type cursor struct {
	r    io.ReaderAt
	size int64
	pos  int64
	buf  []byte
	bpos int64 // file offset of buf[0]
}

const cursorChunk = 64 << 10

// desc names what is being read, for error messages; it is only formatted
// when an error happens.
type desc struct {
	what string
	name string
	idx  int // -1 when not indexed
}

func (d desc) String() string {
	s := d.what
	if d.name != "" {
		s += " " + strconv.Quote(d.name)
	}
	if d.idx >= 0 {
		s += " #" + strconv.Itoa(d.idx)
	}
	return s
}

func (c *cursor) remaining() int64 { return c.size - c.pos }

// next returns the next n bytes (valid until the next call).
func (c *cursor) next(n int64, what desc) ([]byte, error) {
	if n < 0 || n > c.remaining() {
		return nil, fmt.Errorf("%w: truncated at offset %d reading %v (%d bytes needed, %d left)", ErrFormat, c.pos, what, n, c.remaining())
	}
	if c.pos >= c.bpos && c.pos+n <= c.bpos+int64(len(c.buf)) {
		b := c.buf[c.pos-c.bpos : c.pos-c.bpos+n]
		c.pos += n
		return b, nil
	}
	want := max(n, cursorChunk)
	want = min(want, c.remaining())
	if int64(cap(c.buf)) < want {
		c.buf = make([]byte, want)
	}
	c.buf = c.buf[:want]
	got, err := c.r.ReadAt(c.buf, c.pos)
	if int64(got) < n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: reading %v at offset %d: %w", ErrFormat, what, c.pos, err)
	}
	c.buf = c.buf[:got]
	c.bpos = c.pos
	c.pos += n
	return c.buf[:n], nil
}

func (c *cursor) u32(what desc) (uint32, error) {
	b, err := c.next(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (c *cursor) u64(what desc) (uint64, error) {
	b, err := c.next(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (c *cursor) str(what desc) (string, error) {
	b, err := c.str0(what)
	return string(b), err
}

// str0 reads a string and returns its bytes, valid until the next read.
func (c *cursor) str0(what desc) ([]byte, error) {
	n, err := c.u64(what)
	if err != nil {
		return nil, err
	}
	if n > uint64(c.remaining()) {
		return nil, fmt.Errorf("%w: %v length %d at offset %d exceeds the %d bytes left in the file", ErrFormat, what, n, c.pos-8, c.remaining())
	}
	return c.next(int64(n), what)
}

// parse reads a GGUF header, metadata and tensor table from r (size bytes)
// and validates every tensor against the file size. It never panics.
func parse(r io.ReaderAt, size int64) (*header, error) {
	c := &cursor{r: r, size: size}
	if size < 4 {
		return nil, fmt.Errorf("%w: file is %d bytes, too small for a GGUF header", ErrFormat, size)
	}
	m, err := c.next(4, desc{"magic", "", -1})
	if err != nil {
		return nil, err
	}
	if string(m) != magic {
		return nil, fmt.Errorf("%w: bad magic %q (want %q): not a GGUF file", ErrFormat, m, magic)
	}
	h := &header{size: size, alignment: defaultAlignment}
	if h.version, err = c.u32(desc{"version", "", -1}); err != nil {
		return nil, err
	}
	if h.version != 2 && h.version != 3 {
		hint := ""
		if h.version == 1 {
			hint = " (GGUF v1 is obsolete: re-convert the model with a current llama.cpp)"
		}
		return nil, fmt.Errorf("%w %d: helexa reads versions 2 and 3%s", ErrVersion, h.version, hint)
	}
	nTensors, err := c.u64(desc{"tensor count", "", -1})
	if err != nil {
		return nil, err
	}
	nKV, err := c.u64(desc{"metadata count", "", -1})
	if err != nil {
		return nil, err
	}
	// Minimum encodings: a kv is key length (8) + type (4) + 1 byte value;
	// a tensor info is name length (8) + n_dims (4) + type (4) + offset (8).
	if nKV > uint64(c.remaining())/13 {
		return nil, fmt.Errorf("%w: metadata count %d cannot fit in the %d-byte file", ErrFormat, nKV, size)
	}
	if nTensors > uint64(c.remaining())/24 {
		return nil, fmt.Errorf("%w: tensor count %d cannot fit in the %d-byte file", ErrFormat, nTensors, size)
	}
	if err := h.readKVs(c, int(nKV)); err != nil {
		return nil, err
	}
	if err := h.readAlignment(); err != nil {
		return nil, err
	}
	if err := h.readTensorInfos(c, int(nTensors)); err != nil {
		return nil, err
	}
	h.dataOffset = alignUp(c.pos, int64(h.alignment))
	if err := h.checkTensorBounds(); err != nil {
		return nil, err
	}
	return h, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

func (h *header) readKVs(c *cursor, n int) error {
	h.kvs = make([]kv, 0, n)
	h.index = make(map[string]int, n)
	for i := range n {
		key, err := c.str(desc{"metadata key", "", i})
		if err != nil {
			return err
		}
		if _, dup := h.index[key]; dup {
			return fmt.Errorf("%w: duplicate metadata key %q", ErrFormat, key)
		}
		t, err := c.u32(desc{"type of metadata key", key, -1})
		if err != nil {
			return err
		}
		v, err := readValue(c, ValueType(t), key, 0)
		if err != nil {
			return err
		}
		h.index[key] = len(h.kvs)
		h.kvs = append(h.kvs, kv{key: key, val: v})
	}
	return nil
}

// readValue reads one value of type t for metadata key key.
func readValue(c *cursor, t ValueType, key string, depth int) (Value, error) {
	if !t.valid() {
		return Value{}, fmt.Errorf("%w: metadata key %q has unknown value type %d", ErrFormat, key, uint32(t))
	}
	if t == TypeArray {
		return readArray(c, key, depth)
	}
	if t == TypeString {
		s, err := c.str(desc{"string value of", key, -1})
		return Value{Type: t, V: s}, err
	}
	v, err := readScalar(c, t, key)
	return Value{Type: t, V: v}, err
}

func readScalar(c *cursor, t ValueType, key string) (any, error) {
	b, err := c.next(int64(t.fixedSize()), desc{t.String() + " value of", key, -1})
	if err != nil {
		return nil, err
	}
	return decodeScalar(t, b, key)
}

func decodeScalar(t ValueType, b []byte, key string) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeBool:
		return b[0] != 0, nil
	case TypeUint16:
		return le.Uint16(b), nil
	case TypeInt16:
		return int16(le.Uint16(b)), nil
	case TypeUint32:
		return le.Uint32(b), nil
	case TypeInt32:
		return int32(le.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case TypeUint64:
		return le.Uint64(b), nil
	case TypeInt64:
		return int64(le.Uint64(b)), nil
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b)), nil
	}
	return nil, fmt.Errorf("%w: metadata key %q: %s is not a scalar type", ErrFormat, key, t)
}

func readArray(c *cursor, key string, depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, fmt.Errorf("%w: metadata key %q: arrays nested deeper than %d", ErrFormat, key, maxNesting)
	}
	et, err := c.u32(desc{"array element type of", key, -1})
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.valid() {
		return Value{}, fmt.Errorf("%w: metadata key %q: array of unknown value type %d", ErrFormat, key, et)
	}
	n, err := c.u64(desc{"array length of", key, -1})
	if err != nil {
		return Value{}, err
	}
	minSize := uint64(8) // a string or an inner array needs at least its 8-byte length
	if fs := elem.fixedSize(); fs > 0 {
		minSize = uint64(fs)
	}
	if n > uint64(c.remaining())/minSize {
		return Value{}, fmt.Errorf("%w: metadata key %q: array length %d cannot fit in the %d bytes left in the file", ErrFormat, key, n, c.remaining())
	}
	arr := make([]any, n)
	if fs := elem.fixedSize(); fs > 0 {
		b, err := c.next(int64(n)*int64(fs), desc{"array data of", key, -1})
		if err != nil {
			return Value{}, err
		}
		for i := range arr {
			if arr[i], err = decodeScalar(elem, b[i*fs:(i+1)*fs], key); err != nil {
				return Value{}, err
			}
		}
		return Value{Type: TypeArray, Elem: elem, V: arr}, nil
	}
	if elem == TypeString {
		return Value{Type: TypeArray, Elem: elem, V: arr}, readStrings(c, arr, key)
	}
	for i := range arr {
		v, err := readValue(c, elem, key, depth+1)
		if err != nil {
			return Value{}, err
		}
		arr[i] = v
	}
	return Value{Type: TypeArray, Elem: elem, V: arr}, nil
}

// stringArena is the chunk size strings of an array are copied into: one
// allocation per chunk instead of one per string (vocabularies hold 100k+).
const stringArena = 256 << 10

// readStrings fills arr with the strings of an array of strings.
func readStrings(c *cursor, arr []any, key string) error {
	var arena []byte
	for i := range arr {
		b, err := c.str0(desc{"string array element of", key, i})
		if err != nil {
			return err
		}
		if len(b) > cap(arena)-len(arena) {
			arena = make([]byte, 0, max(stringArena, len(b)))
		}
		start := len(arena)
		arena = append(arena, b...)
		arr[i] = unsafe.String(unsafe.SliceData(arena[start:]), len(b))
	}
	return nil
}

func (h *header) readAlignment() error {
	i, ok := h.index["general.alignment"]
	if !ok {
		return nil
	}
	a, ok := asUint(h.kvs[i].val.V)
	if !ok || h.kvs[i].val.Type == TypeArray {
		return fmt.Errorf("%w: general.alignment must be an unsigned integer, got %s", ErrFormat, h.kvs[i].val.Type)
	}
	if a == 0 || a&(a-1) != 0 || a > 1<<30 {
		return fmt.Errorf("%w: general.alignment %d is not a power of two (up to 2^30)", ErrFormat, a)
	}
	h.alignment = a
	return nil
}

func (h *header) readTensorInfos(c *cursor, n int) error {
	h.tensors = make([]*TensorInfo, 0, n)
	names := make(map[string]bool, n)
	for i := range n {
		t, err := readTensorInfo(c, i, h.alignment)
		if err != nil {
			return err
		}
		if names[t.Name] {
			return fmt.Errorf("%w: duplicate tensor name %q", ErrFormat, t.Name)
		}
		names[t.Name] = true
		h.tensors = append(h.tensors, t)
	}
	return nil
}

func readTensorInfo(c *cursor, i int, alignment uint64) (*TensorInfo, error) {
	name, err := c.str(desc{"name of tensor", "", i})
	if err != nil {
		return nil, err
	}
	nd, err := c.u32(desc{"dimension count of tensor", name, -1})
	if err != nil {
		return nil, err
	}
	if nd > maxDims {
		return nil, fmt.Errorf("%w: tensor %q has %d dimensions (at most %d)", ErrFormat, name, nd, maxDims)
	}
	t := &TensorInfo{Name: name, Dims: make([]uint64, nd)}
	for d := range t.Dims {
		if t.Dims[d], err = c.u64(desc{"dimension of tensor", name, d}); err != nil {
			return nil, err
		}
	}
	typ, err := c.u32(desc{"type of tensor", name, -1})
	if err != nil {
		return nil, err
	}
	t.Type = dtype.Type(typ)
	if t.Offset, err = c.u64(desc{"offset of tensor", name, -1}); err != nil {
		return nil, err
	}
	if err := t.validate(alignment); err != nil {
		return nil, err
	}
	return t, nil
}

// validate checks the type, shape and alignment of t and computes its size.
func (t *TensorInfo) validate(alignment uint64) error {
	if !t.Type.Known() {
		return fmt.Errorf("%w: tensor %q has type id %d, which helexa does not support", ErrUnknownType, t.Name, uint32(t.Type))
	}
	n, ok := elementCount(t.Dims)
	if !ok {
		return fmt.Errorf("%w: tensor %q: element count of dimensions %v overflows", ErrFormat, t.Name, t.Dims)
	}
	var ne0 uint64 = 1
	if len(t.Dims) > 0 {
		ne0 = t.Dims[0]
	}
	bs := uint64(t.Type.BlockSize())
	if ne0%bs != 0 {
		return fmt.Errorf("%w: tensor %q: first dimension %d is not a multiple of the %s block size %d", ErrFormat, t.Name, ne0, t.Type, bs)
	}
	rowBytes, err := t.Type.RowBytes(int64(ne0))
	if err != nil {
		return fmt.Errorf("%w: tensor %q: %w", ErrFormat, t.Name, err)
	}
	rows := uint64(1)
	if ne0 != 0 {
		rows = uint64(n) / ne0
	}
	hi, size := bits.Mul64(uint64(rowBytes), rows)
	if hi != 0 || size > math.MaxInt64 {
		return fmt.Errorf("%w: tensor %q: byte size overflows", ErrFormat, t.Name)
	}
	t.Size = int64(size)
	if t.Offset%alignment != 0 {
		return fmt.Errorf("%w: tensor %q: offset %d is not a multiple of the alignment %d", ErrFormat, t.Name, t.Offset, alignment)
	}
	return nil
}

// elementCount multiplies the dimensions, reporting overflow of int64.
func elementCount(dims []uint64) (int64, bool) {
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return int64(n), true
}

// checkTensorBounds checks that every tensor's data lies inside the file.
func (h *header) checkTensorBounds() error {
	dataSize := h.size - h.dataOffset
	for _, t := range h.tensors {
		if t.Size == 0 {
			continue
		}
		if dataSize < 0 || t.Offset > uint64(dataSize) || uint64(t.Size) > uint64(dataSize)-t.Offset {
			return fmt.Errorf("%w: tensor %q: data at offset %d (+%d bytes, data section starts at %d) runs past the end of the %d-byte file (truncated?)",
				ErrFormat, t.Name, t.Offset, t.Size, h.dataOffset, h.size)
		}
	}
	return nil
}
