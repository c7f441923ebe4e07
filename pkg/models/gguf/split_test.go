package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/dtype"
)

// writeSplit writes a model as n shards the way llama.cpp's gguf-split does:
// metadata in the first shard, split.* keys in all, tensor i in shard i%n.
func writeSplit(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		w := NewWriter()
		if i == 0 {
			w.SetString("general.architecture", "llama")
			w.SetUint32("llama.block_count", 3)
		}
		mustSet(t, w, keySplitNo, Value{Type: TypeUint16, V: uint16(i)})
		mustSet(t, w, keySplitCount, Value{Type: TypeUint16, V: uint16(n)})
		w.SetInt32("split.tensors.count", int32(2*n))
		for j := range 2 * n {
			if j%n != i {
				continue
			}
			name := "t" + string(rune('a'+j))
			if err := w.AddTensor(name, dtype.F32, []uint64{2}, f32Bytes(float32(j), float32(j))); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(dir, "m-"+pad5(i+1)+"-of-"+pad5(n)+".gguf")
		if err := w.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func mustSet(t *testing.T, w *Writer, k string, v Value) {
	t.Helper()
	if err := w.SetValue(k, v); err != nil {
		t.Fatal(err)
	}
}

func pad5(n int) string {
	s := "0000" + string(rune('0'+n))
	return s[len(s)-5:]
}

func TestOpenSplit(t *testing.T) {
	paths := writeSplit(t, t.TempDir(), 3)
	for _, open := range []string{paths[0], paths[2]} {
		f, err := Open(open)
		if err != nil {
			t.Fatal(err)
		}
		if f.Path() != paths[0] || len(f.Shards()) != 3 || f.Arch() != "llama" {
			t.Errorf("path %s shards %v arch %q", f.Path(), f.Shards(), f.Arch())
		}
		var total int64
		for _, p := range paths {
			st, _ := os.Stat(p)
			total += st.Size()
		}
		if f.FileSize() != total {
			t.Errorf("FileSize %d, want %d", f.FileSize(), total)
		}
		if len(f.Tensors()) != 6 {
			t.Fatalf("%d tensors", len(f.Tensors()))
		}
		for j := range 6 {
			ti, ok := f.Tensor("t" + string(rune('a'+j)))
			if !ok || !bytes.Equal(f.TensorData(ti), f32Bytes(float32(j), float32(j))) {
				t.Errorf("tensor %d data wrong", j)
			}
		}
		_ = f.Close()
	}
}

func TestOpenSplitMissingShard(t *testing.T) {
	paths := writeSplit(t, t.TempDir(), 3)
	_ = os.Remove(paths[1])
	_, err := Open(paths[0])
	if err == nil || !strings.Contains(err.Error(), "shard 2 of 3 is missing") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenSplitMismatchedShard(t *testing.T) {
	dir := t.TempDir()
	paths := writeSplit(t, dir, 2)
	// Replace shard 2 with shard 1's bytes: its split.no says shard 1.
	b, _ := os.ReadFile(paths[0])
	if err := os.WriteFile(paths[1], b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(paths[0]); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "metadata says shard 1 of 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenShardUnderPlainName(t *testing.T) {
	dir := t.TempDir()
	paths := writeSplit(t, dir, 2)
	plain := filepath.Join(dir, "renamed.gguf")
	if err := os.Rename(paths[0], plain); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(plain); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "split model") {
		t.Fatalf("err = %v", err)
	}
}
