package gguf

import (
	"fmt"

	"github.com/helexa/helexa/pkg/dtype"
)

// TensorInfo describes one tensor of the file.
type TensorInfo struct {
	Name string
	// Dims are ggml's ne: the fastest-varying dimension first.
	Dims []uint64
	Type dtype.Type
	// Offset is the byte offset of the data inside its shard's data section.
	Offset uint64
	// Size is the byte size of the data.
	Size int64

	shard int
}

// Elements is the number of elements (the product of Dims).
// It is 0 when the product overflows int64, which a parsed file never does.
func (t *TensorInfo) Elements() int64 {
	n, _ := elementCount(t.Dims)
	return n
}

// shard is one mapped file of a (possibly split) model.
type shard struct {
	path string
	data []byte // the whole file, memory-mapped read-only
	hdr  *header
}

// File is an opened GGUF model: metadata from the first shard, tensors of
// every shard, tensor data memory-mapped. It is safe for concurrent reads;
// Close must not race with other calls.
type File struct {
	path    string
	shards  []shard
	kvs     []kv
	index   map[string]int
	tensors []*TensorInfo
	byName  map[string]*TensorInfo
	size    int64
	unmap   func([]byte) error
}

// Version is the GGUF version of the (first) file.
func (f *File) Version() uint32 { return f.shards[0].hdr.version }

// Arch returns general.architecture, or "" when absent.
func (f *File) Arch() string { return f.StringOr("general.architecture", "") }

// FileSize is the total size in bytes of every shard.
func (f *File) FileSize() int64 { return f.size }

// Path is the path the file was opened with (the first shard for splits).
func (f *File) Path() string { return f.path }

// Alignment is the data alignment of the (first) file.
func (f *File) Alignment() uint64 { return f.shards[0].hdr.alignment }

// Shards returns the paths of every file of the model, in order.
func (f *File) Shards() []string {
	out := make([]string, len(f.shards))
	for i, s := range f.shards {
		out[i] = s.path
	}
	return out
}

// Close unmaps every shard. Slices from TensorData must not be used after.
func (f *File) Close() error {
	var first error
	for i := range f.shards {
		if f.shards[i].data == nil || f.unmap == nil {
			continue
		}
		if err := f.unmap(f.shards[i].data); err != nil && first == nil {
			first = fmt.Errorf("unmap %s: %w", f.shards[i].path, err)
		}
		f.shards[i].data = nil
	}
	return first
}

// Tensors returns every tensor in file order (shard by shard).
func (f *File) Tensors() []*TensorInfo { return f.tensors }

// Tensor looks a tensor up by name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	t, ok := f.byName[name]
	return t, ok
}

// TensorData returns the tensor's bytes as a slice of the memory map (never a
// copy). It returns nil for a tensor that does not belong to f or after Close.
func (f *File) TensorData(t *TensorInfo) []byte {
	if t == nil || t.shard < 0 || t.shard >= len(f.shards) || f.byName[t.Name] != t {
		return nil
	}
	s := f.shards[t.shard]
	if s.data == nil {
		return nil
	}
	start := s.hdr.dataOffset + int64(t.Offset)
	end := start + t.Size
	if t.Size == 0 {
		return []byte{}
	}
	return s.data[start:end:end]
}
