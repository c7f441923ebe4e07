//go:build unix

package fsutil

import "syscall"

// oNonblock keeps open(2) from waiting for a FIFO's writer.
const oNonblock = syscall.O_NONBLOCK
