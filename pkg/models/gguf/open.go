package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/helexa/helexa/internal/fsutil"
)

// splitName matches llama.cpp's split naming: prefix-00001-of-00003.gguf.
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// Split metadata keys written by llama.cpp's gguf-split.
const (
	keySplitNo    = "split.no"
	keySplitCount = "split.count"
)

// Open memory-maps a GGUF file and parses its metadata and tensor table.
// A path named prefix-0000K-of-0000N.gguf opens all N shards as one File
// (metadata from the first shard, tensors from all).
func Open(path string) (*File, error) {
	if m := splitName.FindStringSubmatch(filepath.Base(path)); m != nil {
		count, _ := strconv.Atoi(m[3])
		if count > 1 {
			return openSplit(path, filepath.Join(filepath.Dir(path), m[1]), count)
		}
	}
	s, err := mapShard(path)
	if err != nil {
		return nil, err
	}
	f := newFile(path, []shard{s})
	if n := f.UintOr(keySplitCount, 1); n > 1 {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s is shard %d of a %d-file split model but is not named like one (prefix-00001-of-%05d.gguf); open the split by its first shard's name",
			ErrFormat, path, f.UintOr(keySplitNo, 0)+1, n, n)
	}
	if err := f.index0(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func openSplit(path, prefix string, count int) (*File, error) {
	shards := make([]shard, 0, count)
	fail := func(err error) (*File, error) {
		for _, s := range shards {
			_ = unix.Munmap(s.data)
		}
		return nil, err
	}
	for i := 1; i <= count; i++ {
		p := fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, i, count)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("split model %s: shard %d of %d is missing: %s not found (download every shard)", path, i, count, p))
		}
		s, err := mapShard(p)
		if err != nil {
			return fail(err)
		}
		shards = append(shards, s)
		if err := checkShard(s, i, count); err != nil {
			return fail(err)
		}
	}
	f := newFile(shards[0].path, shards)
	if err := f.index0(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// checkShard verifies a shard's split.no and split.count (when present).
func checkShard(s shard, no, count int) error {
	f := &File{kvs: s.hdr.kvs, index: s.hdr.index}
	if !f.Has(keySplitCount) {
		if count == 1 {
			return nil
		}
		return fmt.Errorf("%w: %s is named as shard %d of %d but has no %s metadata", ErrFormat, s.path, no, count, keySplitCount)
	}
	gotCount, err := f.Uint(keySplitCount)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	gotNo, err := f.Uint(keySplitNo)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if gotCount != uint64(count) || gotNo != uint64(no-1) {
		return fmt.Errorf("%w: %s is named as shard %d of %d but its metadata says shard %d of %d", ErrFormat, s.path, no, count, gotNo+1, gotCount)
	}
	return nil
}

// mapShard maps one file read-only and parses it.
func mapShard(path string) (shard, error) {
	fd, err := openRegular(path)
	if err != nil {
		return shard{}, fmt.Errorf("open GGUF: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return shard{}, fmt.Errorf("open GGUF %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return shard{}, fmt.Errorf("open GGUF %s: not a regular file (it is a %s); name a .gguf file", path, fsutil.FileKind(st.Mode()))
	}
	size := st.Size()
	if size < 24 {
		return shard{}, fmt.Errorf("%w: %s is %d bytes, too small for a GGUF header", ErrFormat, path, size)
	}
	if int64(int(size)) != size {
		return shard{}, fmt.Errorf("open GGUF %s: %d bytes is too large to map", path, size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return shard{}, fmt.Errorf("mmap %s: %w", path, err)
	}
	h, err := parse(bytes.NewReader(data), size)
	if err != nil {
		_ = unix.Munmap(data)
		return shard{}, fmt.Errorf("%s: %w", path, err)
	}
	return shard{path: path, data: data, hdr: h}, nil
}

func newFile(path string, shards []shard) *File {
	f := &File{
		path:   path,
		shards: shards,
		kvs:    shards[0].hdr.kvs,
		index:  shards[0].hdr.index,
		unmap:  unix.Munmap,
	}
	for _, s := range shards {
		f.size += s.hdr.size
	}
	return f
}

// index0 builds the tensor table over every shard, rejecting duplicates.
func (f *File) index0() error {
	n := 0
	for _, s := range f.shards {
		n += len(s.hdr.tensors)
	}
	f.tensors = make([]*TensorInfo, 0, n)
	f.byName = make(map[string]*TensorInfo, n)
	for i, s := range f.shards {
		for _, t := range s.hdr.tensors {
			if prev, dup := f.byName[t.Name]; dup {
				return fmt.Errorf("%w: tensor %q is in both %s and %s", ErrFormat, t.Name, f.shards[prev.shard].path, s.path)
			}
			t.shard = i
			f.byName[t.Name] = t
			f.tensors = append(f.tensors, t)
		}
	}
	return nil
}

// fromBytes builds a File over an in-memory GGUF image (tests and fuzzing).
func fromBytes(path string, data []byte) (*File, error) {
	h, err := parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	f := newFile(path, []shard{{path: path, data: data, hdr: h}})
	f.unmap = nil
	if err := f.index0(); err != nil {
		return nil, err
	}
	return f, nil
}

// openRegular opens path for reading without blocking in open(2): a FIFO
// or a device must fail the regular-file check on the descriptor, not hang
// the load waiting for a writer.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}
