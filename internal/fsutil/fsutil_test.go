package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	tests := []struct {
		name string
		data string
		perm os.FileMode
	}{
		{"create", "one", 0o600},
		{"replace", "two", 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := WriteFileAtomic(p, []byte(tt.data), tt.perm); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil || string(b) != tt.data {
				t.Fatalf("read %q, %v; want %q", b, err, tt.data)
			}
			st, err := os.Stat(p)
			if err != nil || st.Mode().Perm() != tt.perm {
				t.Errorf("mode %v, %v; want %v", st.Mode().Perm(), err, tt.perm)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct{ in, want string }{
		{"~", home},
		{"~/a/b", filepath.Join(home, "a", "b")},
		{"~user/a", "~user/a"},
		{"a/~/b", "a/~/b"},
		{"/abs", "/abs"},
	}
	for _, tt := range tests {
		got, err := ExpandHome(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ExpandHome(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAbsIfExists(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("m.gguf", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := AbsIfExists("m.gguf"), filepath.Join(dir, "m.gguf"); got != want {
		t.Errorf("existing file: %q, want %q", got, want)
	}
	if got := AbsIfExists("org/repo:Q8_0"); got != "org/repo:Q8_0" {
		t.Errorf("reference changed to %q", got)
	}
}

func TestFileKind(t *testing.T) {
	tests := []struct {
		mode os.FileMode
		want string
	}{
		{0o644, "regular file"},
		{os.ModeSymlink | 0o777, "symbolic link"},
		{os.ModeNamedPipe | 0o600, "named pipe (FIFO)"},
		{os.ModeDir | 0o755, "directory"},
		{os.ModeSocket, "socket"},
		{os.ModeDevice | os.ModeCharDevice, "device"},
	}
	for _, tt := range tests {
		if got := FileKind(tt.mode); got != tt.want {
			t.Errorf("FileKind(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}
