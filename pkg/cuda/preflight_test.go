package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckFits(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(file, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(dir, "hf")
	if err := os.Mkdir(st, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"a.safetensors": 1000, "b.safetensors": 3000, "config.json": 1 << 20} {
		if err := os.WriteFile(filepath.Join(st, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		path string
		free int64
		fits bool
	}{
		{"file fits", file, 512<<20 + 4096, true},
		{"file one byte short", file, 512<<20 + 4095, false},
		{"directory counts safetensors only", st, 512<<20 + 4000, true},
		{"big GPU keeps a tenth", file, 10 << 30, true},
		{"nothing free", file, 0, false},
	} {
		err := CheckFits(tc.path, tc.free)
		if tc.fits != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrNoRoom) {
			t.Errorf("%s: error %v is not ErrNoRoom", tc.name, err)
		}
	}
	if err := CheckFits(filepath.Join(dir, "missing"), 1<<40); err == nil {
		t.Error("a missing file fits")
	}
}
