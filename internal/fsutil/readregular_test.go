//go:build unix

package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want error
	}{
		{small, nil},
		{big, ErrTooLarge},
		{zero, ErrNotRegular},
		{fifo, ErrNotRegular},
		{dir, ErrNotRegular},
		{filepath.Join(dir, "missing.json"), fs.ErrNotExist},
	}
	for _, tc := range tests {
		start := time.Now()
		data, err := ReadRegular(tc.path, 64)
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %v", tc.path, time.Since(start))
		}
		switch {
		case tc.want == nil && (err != nil || string(data) != `{"a": 1}`):
			t.Errorf("%s: %q, %v", tc.path, data, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: err = %v, want %v", tc.path, err, tc.want)
		}
	}
}
