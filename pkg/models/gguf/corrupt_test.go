package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tensorInfoAt returns the offset just after the name of tensor name in a
// GGUF image (where its n_dims field starts).
func tensorInfoAt(t testing.TB, data []byte, name string) int {
	t.Helper()
	i := bytes.Index(data, []byte(name))
	if i < 0 {
		t.Fatalf("tensor %s not found", name)
	}
	return i + len(name)
}

// corruptions are edits of smallModel's encoding, each with the error it
// must produce: the wrapped sentinel and a fragment of the message.
func corruptions(t testing.TB) []struct {
	name string
	edit func([]byte) []byte
	want error
	msg  string
} {
	le := binary.LittleEndian
	put64 := func(off int, v uint64) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint64(b[off:], v); return b }
	}
	base := encode(t, smallModel(t))
	a := tensorInfoAt(t, base, "a.weight") // n_dims u32, dims 2×u64, type u32, offset u64
	b := tensorInfoAt(t, base, "b.weight") // n_dims u32, dims 1×u64, type u32, offset u64
	arr := bytes.Index(base, []byte("tokenizer.ggml.tokens")) + len("tokenizer.ggml.tokens") + 4 + 4
	return []struct {
		name string
		edit func([]byte) []byte
		want error
		msg  string
	}{
		{"empty", func([]byte) []byte { return nil }, ErrFormat, "too small"},
		{"wrong magic", func(d []byte) []byte { copy(d, "GGML"); return d }, ErrFormat, "bad magic"},
		{"version 1", func(d []byte) []byte { le.PutUint32(d[4:], 1); return d }, ErrVersion, "v1 is obsolete"},
		{"version 4", func(d []byte) []byte { le.PutUint32(d[4:], 4); return d }, ErrVersion, "4"},
		{"absurd tensor count", put64(8, 1<<60), ErrFormat, "tensor count"},
		{"absurd kv count", put64(16, 1<<62), ErrFormat, "metadata count"},
		{"absurd key length", put64(24, 1<<50), ErrFormat, "exceeds"},
		{"absurd array length", put64(arr, 1<<58), ErrFormat, "array length"},
		{"unknown value type", func(d []byte) []byte { le.PutUint32(d[24+8+len("general.architecture"):], 77); return d }, ErrFormat, "unknown value type 77"},
		{"too many dims", func(d []byte) []byte { le.PutUint32(d[a:], 5); return d }, ErrFormat, "5 dimensions"},
		{"element overflow", func(d []byte) []byte {
			le.PutUint64(d[a+4:], 1<<40)
			le.PutUint64(d[a+12:], 1<<40)
			return d
		}, ErrFormat, "overflows"},
		{"not a whole block", func(d []byte) []byte { le.PutUint64(d[b+4:], 33); return d }, ErrFormat, "block size 32"},
		{"unknown tensor type", func(d []byte) []byte { le.PutUint32(d[b+12:], 99); return d }, ErrUnknownType, `"b.weight" has type id 99`},
		{"unaligned offset", func(d []byte) []byte { le.PutUint64(d[b+16:], 33); return d }, ErrFormat, "not a multiple of the alignment"},
		{"offset past end", func(d []byte) []byte { le.PutUint64(d[b+16:], 1<<20); return d }, ErrFormat, "past the end"},
		{"huge offset", func(d []byte) []byte { le.PutUint64(d[b+16:], 1<<63); return d }, ErrFormat, "past the end"},
		{"duplicate tensor", func(d []byte) []byte { copy(d[b-len("b.weight"):], "a.weight"); return d }, ErrFormat, `duplicate tensor name "a.weight"`},
		{"cut in data", func(d []byte) []byte { return d[:len(d)-40] }, ErrFormat, "past the end"},
		{"cut in header", func(d []byte) []byte { return d[:a] }, ErrFormat, "truncated"},
	}
}

func TestCorruptedImages(t *testing.T) {
	for _, c := range corruptions(t) {
		t.Run(c.name, func(t *testing.T) {
			data := c.edit(encode(t, smallModel(t)))
			_, err := fromBytes("x.gguf", data)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, c.want, c.msg)
			}
		})
	}
}

func TestDuplicateKeyRejected(t *testing.T) {
	w := NewWriter()
	w.SetUint32("key.a", 1)
	w.SetUint32("key.b", 2)
	data := encode(t, w)
	i := bytes.Index(data, []byte("key.b"))
	copy(data[i:], "key.a")
	_, err := fromBytes("x.gguf", data)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `duplicate metadata key "key.a"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestBadAlignmentRejected(t *testing.T) {
	for _, v := range []Value{{Type: TypeUint32, V: uint32(3)}, {Type: TypeUint32, V: uint32(0)}, {Type: TypeString, V: "32"}} {
		w := smallModel(t)
		if err := w.SetValue("general.alignment", v); err != nil {
			t.Fatal(err)
		}
		if _, err := fromBytes("x.gguf", encode(t, w)); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "general.alignment") {
			t.Errorf("alignment %v: err = %v", v.V, err)
		}
	}
}

// TestEveryTruncationFails cuts the file at every length short of the end of
// the last tensor's data: each must fail cleanly.
func TestEveryTruncationFails(t *testing.T) {
	data := encode(t, smallModel(t))
	f := mustParse(t, data)
	last := f.Tensors()[len(f.Tensors())-1]
	end := int(f.shards[0].hdr.dataOffset + int64(last.Offset) + last.Size)
	for n := range end {
		if _, err := fromBytes("x.gguf", bytes.Clone(data[:n])); !errors.Is(err, ErrFormat) {
			t.Fatalf("cut at %d of %d: err = %v", n, len(data), err)
		}
	}
	if _, err := fromBytes("x.gguf", data[:end]); err != nil {
		t.Fatalf("cut after the last tensor (only padding lost): %v", err)
	}
}

// TestOpenCorruptedFiles writes corrupted copies of a real fixture to disk.
func TestOpenCorruptedFiles(t *testing.T) {
	src, err := os.ReadFile(fixturePath(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	tok := tensorInfoAt(t, src, "token_embd.weight") // n_dims(4) dims(16) type(4) offset(8)
	cases := []struct {
		name string
		edit func([]byte) []byte
		msg  string
	}{
		{"cut file", func(d []byte) []byte { return d[:len(d)/2] }, "past the end"},
		{"cut header", func(d []byte) []byte { return d[:tok+10] }, "truncated"},
		{"cut metadata", func(d []byte) []byte { return d[:100] }, "cannot fit"},
		{"wrong magic", func(d []byte) []byte { copy(d, "GGJT"); return d }, "bad magic"},
		{"offset past end", func(d []byte) []byte { le.PutUint64(d[tok+24:], 1<<32); return d }, "token_embd.weight"},
		{"absurd tensor count", func(d []byte) []byte { le.PutUint64(d[8:], 1<<40); return d }, "tensor count"},
		{"absurd kv count", func(d []byte) []byte { le.PutUint64(d[16:], 1<<40); return d }, "metadata count"},
		{"tiny", func(d []byte) []byte { return d[:10] }, "too small"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".gguf")
			if err := os.WriteFile(p, c.edit(bytes.Clone(src)), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(p)
			if err == nil {
				f.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want ErrFormat naming the file and containing %q", err, c.msg)
			}
		})
	}
}

func TestOpenMissingAndDirectory(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "none.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}
