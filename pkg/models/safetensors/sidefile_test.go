//go:build unix

package safetensors

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/fsutil"
)

// TestHostileSideFiles: a side file that is /dev/zero behind a link, a
// FIFO, or over its cap fails at once with a typed error; a missing one
// passes CheckSideFiles.
func TestHostileSideFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "tokenizer.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, IndexName)); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "chat_template.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxTemplateBytes + 1); err != nil { // sparse
		t.Fatal(err)
	}
	big.Close()
	start := time.Now()
	for name, want := range map[string]error{"config.json": fsutil.ErrNotRegular, "tokenizer.json": fsutil.ErrNotRegular, "chat_template.jinja": fsutil.ErrTooLarge} {
		if _, err := ReadSideFile(dir, name); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
		if err := CheckSideFiles(dir, "missing.json", name); !errors.Is(err, want) {
			t.Errorf("check %s: err = %v, want %v", name, err, want)
		}
	}
	if _, err := Open(dir); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Errorf("Open with a /dev/zero index: err = %v", err)
	}
	if err := CheckSideFiles(dir, "missing.json"); err != nil {
		t.Errorf("a missing file: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}
