//go:build unix

package cpu

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// releasePages drops the whole pages of b, a read-only file mapping, from
// this process's memory; a later read faults them back in from the file.
func releasePages(b []byte) {
	page := uintptr(os.Getpagesize())
	if len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_DONTNEED) // advice: nothing to do when refused
}
