//go:build !unix

package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockFile creates path exclusively, waiting while another process holds it
// or until ctx ends. The returned func releases it. (A crashed holder leaves
// the file behind; it is treated as stale after an hour.)
func lockFile(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create lock folder: %w", err)
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > time.Hour {
			os.Remove(path)
			continue
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for another download of the same file (lock %s): %w", path, err)
		}
	}
}

// oNoFollow is 0 where the platform has no O_NOFOLLOW; openPartial still
// refuses what is not a regular file once opened.
const oNoFollow = 0
