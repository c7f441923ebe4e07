package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular marks a path that is not a regular file (a FIFO, a device
// such as /dev/zero, a directory), which ReadRegular refuses to read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a file larger than the caller's cap.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads a regular file of at most limit bytes. It opens without
// blocking, so a FIFO fails the check instead of waiting forever for a
// writer; checks the file type on the open descriptor, not on the path, so
// a link swapped between the two cannot slip a device in; and reads at
// most limit+1 bytes, so a file that grows while it is read cannot make it
// read more. A missing file gives an error wrapping fs.ErrNotExist.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w (it grew past the limit of %d bytes)", path, ErrTooLarge, limit)
	}
	return data, nil
}

// CheckRegular checks what ReadRegular would, without reading: path is a
// regular file of at most limit bytes.
func CheckRegular(path string, limit int64) error {
	f, err := openRegular(path, limit)
	if err != nil {
		return err
	}
	return f.Close()
}

// openRegular opens path without blocking and checks on the descriptor that
// it is a regular file of at most limit bytes.
func openRegular(path string, limit int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("read %s: %w (it is a %s)", path, ErrNotRegular, FileKind(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, fmt.Errorf("read %s: %w (%d bytes, the limit is %d)", path, ErrTooLarge, st.Size(), limit)
	}
	return f, nil
}
