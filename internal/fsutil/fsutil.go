// Package fsutil owns the small file-system helpers several packages
// share: atomic file writes, naming file types in errors, "~" expansion, and making a local model path
// absolute.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is renamed over path, so readers see the old content or
// the new one, never a part. The file gets exactly perm (the umask does not
// apply). The directory must exist.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	err = errors.Join(werr, tmp.Close())
	if err == nil {
		err = os.Chmod(name, perm)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// ExpandHome turns "~" or a leading "~/" into the home directory, as a
// shell would; other paths are returned unchanged.
func ExpandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", path, err)
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~")), nil
}

// AbsIfExists makes an existing file or directory path absolute (a daemon
// resolves paths from its own working directory); anything else, such as
// a model reference, is returned unchanged.
func AbsIfExists(path string) string {
	if _, err := os.Stat(path); err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// FileKind names a file's type for error messages ("symbolic link",
// "named pipe (FIFO)", ...), where a mode string such as "L---------"
// would mean nothing to most users.
func FileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file (" + t.String() + ")"
	}
}
