package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/helexa/helexa/internal/fsutil"
)

// ErrNotRegular marks a cache path that is not a regular file (a symlink
// where a partial download should be, a FIFO, a device): helexa refuses
// to write through it or read from it.
var ErrNotRegular = errors.New("not a regular file")

// openPartial opens (creating it) a partial download for appending and
// rewriting, never following a symbolic link at the last path element,
// and refuses anything that is not a regular file once opened.
func openPartial(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o644)
	if err != nil {
		if isSymlink(path) {
			return nil, fmt.Errorf("refusing to write %s: %w (it is a symbolic link; remove it and pull again)", path, ErrNotRegular)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("refusing to write %s: %w (it is a %s; remove it and pull again)", path, ErrNotRegular, fsutil.FileKind(st.Mode()))
	}
	return f, nil
}

func isSymlink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

// checkPartials refuses partial-download paths that exist but are not
// regular files (a planted symlink would make every truncate, rename and
// append act on its target).
func checkPartials(paths ...string) error {
	for _, p := range paths {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("refusing to resume the download through %s: %w (it is a %s); remove it and pull again", p, ErrNotRegular, fsutil.FileKind(st.Mode()))
		}
	}
	return nil
}

// checkInCache refuses a resolved cache path whose symbolic links lead out
// of the cache root (snapshots must point at the repository's blobs).
func (c *Client) checkInCache(path string) error {
	root, err := filepath.EvalSymlinks(c.opts.CacheDir)
	if err != nil {
		return fmt.Errorf("cache root %s: %w", c.opts.CacheDir, err)
	}
	check := func(p string) error {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", p, err)
		}
		if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%w: %s links to %s, outside the cache %s; remove the link and pull again", ErrBadReference, p, target, root)
		}
		return nil
	}
	if err := check(path); err != nil {
		return err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil // a file, not a snapshot directory
	}
	for _, e := range entries {
		if err := check(filepath.Join(path, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
