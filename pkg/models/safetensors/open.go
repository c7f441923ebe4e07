package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/helexa/helexa/internal/fsutil"
)

// IndexName is the file naming every tensor's shard in a sharded model.
const IndexName = "model.safetensors.index.json"

// File is an open checkpoint: one or more memory-mapped .safetensors files
// seen as a single set of tensors.
type File struct {
	path    string
	shards  []shard
	tensors []*TensorInfo
	byName  map[string]*TensorInfo
	size    int64
	unmap   func([]byte) error
}

type shard struct {
	path string
	data []byte
	meta map[string]string
}

// Open opens a checkpoint: a .safetensors file, a
// model.safetensors.index.json (its shards, which must hold every tensor
// the weight map names), or a directory holding either (the index when
// there is one, else every *.safetensors file in it).
func Open(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open safetensors: %w", err)
	}
	if !st.IsDir() {
		if strings.HasSuffix(path, ".json") {
			return openIndex(path)
		}
		return openShards(path, []string{path}, nil)
	}
	idx := filepath.Join(path, IndexName)
	if _, err := os.Stat(idx); err == nil {
		return openIndex(idx)
	}
	files, err := filepath.Glob(filepath.Join(path, "*.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("open safetensors: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("open safetensors: %s holds no *.safetensors file: %w", path, fs.ErrNotExist)
	}
	sort.Strings(files)
	return openShards(path, files, nil)
}

// openIndex opens the shards a model.safetensors.index.json names.
func openIndex(path string) (*File, error) {
	raw, err := fsutil.ReadRegular(path, MaxIndexBytes)
	if err != nil {
		return nil, fmt.Errorf("open safetensors index: %w", err)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s has an empty weight_map", ErrFormat, path)
	}
	dir := filepath.Dir(path)
	seen := map[string]bool{}
	var files []string
	for name, file := range idx.WeightMap {
		if file == "" || file != filepath.Base(file) || file == ".." || strings.ContainsAny(file, `/\`) {
			return nil, fmt.Errorf("%w: %s: tensor %q is mapped to %q, which is not a file name in the model directory", ErrFormat, path, name, file)
		}
		if !seen[file] {
			seen[file] = true
			files = append(files, filepath.Join(dir, file))
		}
	}
	sort.Strings(files)
	want := make(map[string]string, len(idx.WeightMap))
	for name, file := range idx.WeightMap {
		want[name] = filepath.Join(dir, file)
	}
	return openShards(dir, files, want)
}

// openShards maps every file; want (optional) is the index's weight map,
// checked against what the files hold.
func openShards(path string, files []string, want map[string]string) (*File, error) {
	f := &File{path: path, unmap: unix.Munmap}
	for _, p := range files {
		s, h, err := mapFile(p)
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		f.shards = append(f.shards, s)
		if err := f.add(h, len(f.shards)-1); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	for name, file := range want {
		t, ok := f.byName[name]
		if !ok {
			_ = f.Close()
			return nil, fmt.Errorf("%w: the index maps tensor %q to %s, which does not hold it", ErrFormat, name, file)
		}
		if got := f.shards[t.shard].path; got != file {
			_ = f.Close()
			return nil, fmt.Errorf("%w: the index maps tensor %q to %s but it is in %s", ErrFormat, name, file, got)
		}
	}
	return f, nil
}

// add indexes a shard's tensors, rejecting duplicates across shards.
func (f *File) add(h *header, i int) error {
	if f.byName == nil {
		f.byName = map[string]*TensorInfo{}
	}
	f.shards[i].meta = h.meta
	f.size += int64(len(f.shards[i].data))
	for _, t := range h.tensors {
		if prev, dup := f.byName[t.Name]; dup {
			return fmt.Errorf("%w: tensor %q is in both %s and %s", ErrFormat, t.Name, f.shards[prev.shard].path, f.shards[i].path)
		}
		t.shard = i
		f.byName[t.Name] = t
		f.tensors = append(f.tensors, t)
	}
	return nil
}

func mapFile(path string) (shard, *header, error) {
	fd, err := openRegular(path)
	if err != nil {
		return shard{}, nil, fmt.Errorf("open safetensors: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return shard{}, nil, fmt.Errorf("open safetensors %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return shard{}, nil, fmt.Errorf("open safetensors %s: not a regular file (%s)", path, st.Mode().Type())
	}
	size := st.Size()
	if size < 8 {
		return shard{}, nil, fmt.Errorf("%w: %s is %d bytes, too small for a header", ErrFormat, path, size)
	}
	if int64(int(size)) != size {
		return shard{}, nil, fmt.Errorf("open safetensors %s: %d bytes is too large to map", path, size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return shard{}, nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	h, err := parseHeader(data)
	if err != nil {
		_ = unix.Munmap(data)
		return shard{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return shard{path: path, data: data}, h, nil
}

// FromBytes builds a File over an in-memory safetensors image (tests and
// fuzzing); nothing is mapped and Close releases nothing.
func FromBytes(name string, data []byte) (*File, error) {
	h, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	f := &File{path: name, shards: []shard{{path: name, data: data}}}
	if err := f.add(h, 0); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is what Open was given (a file, an index's directory, or a
// directory).
func (f *File) Path() string { return f.path }

// FileSize is the total size of the mapped files.
func (f *File) FileSize() int64 { return f.size }

// Tensors lists every tensor, shard by shard, in offset order.
func (f *File) Tensors() []*TensorInfo { return f.tensors }

// Tensor looks a tensor up by name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	t, ok := f.byName[name]
	return t, ok
}

// TensorData is the tensor's bytes: a slice of the memory map, never a
// copy, valid until Close.
func (f *File) TensorData(t *TensorInfo) []byte {
	return f.shards[t.shard].data[t.Begin:t.End:t.End]
}

// Metadata is the __metadata__ of the first shard (nil when absent).
func (f *File) Metadata() map[string]string {
	if len(f.shards) == 0 {
		return nil
	}
	return f.shards[0].meta
}

// Close unmaps every file. Tensor data must not be used afterwards.
func (f *File) Close() error {
	var errs []error
	for i := range f.shards {
		if f.unmap != nil && f.shards[i].data != nil {
			errs = append(errs, f.unmap(f.shards[i].data))
		}
		f.shards[i].data = nil
	}
	return errors.Join(errs...)
}

// openRegular opens path for reading without blocking in open(2): a FIFO
// or a device must fail the regular-file check on the descriptor, not hang
// the load waiting for a writer.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}
